"""Credit along time for frame-sampling critics: every latent frame gets credit, evenly for an even gradient."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tvrl_bench.credit.temporal import fill_skipped_frames, interpolation_matrix, seen_frames
from tvrl_bench.credit.window import WindowRouter
from tvrl_bench.rewards.base import Reward
from tvrl_bench.tokens import TokenGrid, pixels_to_tokens
from tvrl_bench.training.scoring import score_videos

# HunyuanVideo-1.5's VAE: 4 pixel frames per latent frame after a causal first frame, 16 x 16 pixels per token.
HUNYUAN_GRID = TokenGrid(latent_patch=(1, 1, 1), pixel_patch=(4, 16, 16), causal_first_frame=True)
QWEN_2FPS_33 = [0, 11, 21, 32]  # round(linspace(0, 32, 4)): Qwen3.5's 2 fps sampling of a 33-frame 24 fps video


def test_filled_frames_match_numpy_linear_interpolation_per_pixel():
    g = torch.rand(2, 3, 33, 4, 5, dtype=torch.float64)
    sampled = [3, 11, 21, 30]
    filled = fill_skipped_frames(g, sampled)
    for idx in np.ndindex(2, 3, 4, 5):
        b, k, h, w = idx
        expected = np.interp(np.arange(33), sampled, g[b, k, sampled, h, w].numpy())  # clamps beyond the ends
        np.testing.assert_allclose(filled[b, k, :, h, w].numpy(), expected, rtol=1e-12, atol=1e-12)


def test_interpolation_rows_sum_to_one_and_keep_sampled_frames():
    m = interpolation_matrix(QWEN_2FPS_33, 33)
    torch.testing.assert_close(m.sum(dim=1), torch.ones(33, dtype=torch.float64))
    for f in QWEN_2FPS_33:
        assert m[f, f] == 1.0
    assert seen_frames(torch.zeros(1, 5, 2, 2).index_fill_(1, torch.tensor([1, 3]), 1.0)) == [1, 3]


class SampledFramesCritic(Reward):
    """score = sum of the sampled frames' pixels: d score / d pixel = 1 on those frames, 0 elsewhere."""

    def __init__(self, sampled):
        super().__init__()
        self.sampled = list(sampled)

    def sampled_frames(self, num_frames):
        return self.sampled

    def score_pairs(self, videos, prompts, questions):
        return videos[:, self.sampled].sum(dim=(1, 2, 3, 4))


def test_uniform_gradient_gives_equal_mean_credit_on_every_latent_frame():
    video = torch.rand(2, 33, 3, 32, 48)
    scored = score_videos(SampledFramesCritic(QWEN_2FPS_33), video, ["p", "p"], [["a", "b"], ["a"]], need_grads=True)
    weights = WindowRouter(k=3)(scored.grads, video, HUNYUAN_GRID, scored.mask)  # [2, 9, 2, 3]
    per_frame = weights.mean(dim=(-2, -1))
    torch.testing.assert_close(per_frame, torch.ones_like(per_frame), rtol=1e-6, atol=1e-6)
    # Without the fill, latent frames 1, 2, 4, 5, 7 got nothing and frame 0 four times a later sampled frame.
    raw = torch.zeros(33)
    raw[QWEN_2FPS_33] = 1.0
    old = pixels_to_tokens(raw[:, None, None].expand(33, 16, 16), TokenGrid((1, 1, 1), (4, 16, 16), True))
    assert old[:, 0, 0].tolist() == [1.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.25, 0.0, 0.25]


@pytest.fixture(scope="module")
def tiny_paper_models(tmp_path_factory):
    from tests.policies.tiny_hunyuan import save_tiny_hunyuan
    from tests.rewards.tiny_qwen import save_tiny_qwen
    from tvrl_bench.policies.hunyuan_video15 import HunyuanVideo15Policy
    from tvrl_bench.rewards.qwen.answer_likelihood import QwenVLAnswerLikelihood
    from tvrl_bench.rewards.qwen.inputs import QwenInputs

    root = tmp_path_factory.mktemp("tiny_paper")
    tiny = save_tiny_hunyuan(root / "hunyuan")
    policy = HunyuanVideo15Policy(tiny.path, **{**tiny.policy_kwargs, "frames": 33})
    inputs = QwenInputs(fps=2.0, video_fps=24.0, dtype="float32", device="cpu", batch_size=2)
    critic = QwenVLAnswerLikelihood(str(save_tiny_qwen(root / "qwen3_5", "qwen3_5")), inputs=inputs)
    return policy, critic


def test_every_latent_frame_of_a_tiny_hunyuan_and_qwen3_5_rollout_gets_credit(tiny_paper_models):
    policy, critic = tiny_paper_models
    assert critic.sampled_frames(33) == QWEN_2FPS_33
    torch.manual_seed(0)
    with torch.no_grad():
        video = policy.decode(torch.randn(2, *policy.latent_shape()))  # [2, 33, 3, 32, 32]
    scored = score_videos(critic, video, ["a cat", "a cat"], [["Is there a cat?", "Is it red?"]] * 2, need_grads=True)
    weights = WindowRouter(k=3)(scored.grads, video, policy.token_grid, scored.mask)
    assert weights.shape[1] == 9
    per_frame = weights.mean(dim=(-2, -1))
    assert (per_frame > 0).all(), per_frame
