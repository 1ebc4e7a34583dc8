"""The unifiedreward2 critic on a tiny real Qwen2.5-VL checkpoint (tests/rewards/tiny_qwen)."""

from __future__ import annotations

import pytest
import torch

from tests.rewards import tiny_qwen
from tests.rewards.tiny_qwen import build_critic
from tvrl_bench.rewards.qwen.inputs import QwenInputs
from tvrl_bench import registry
from tvrl_bench.config import load_config
from tvrl_bench.rewards.qwen.chat import render_images_prompt
from tvrl_bench.rewards.unifiedreward2 import UR2_ANSWER, UR2_PROMPT, UnifiedReward2

VIDEO_FPS = 4.0
NAMES = ("alignment", "physics", "style")
PROMPTS = ["a red ball rolls left", "two cats play"]
NUM_IMAGES = 4


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return str(tiny_qwen.save_tiny_qwen(tmp_path_factory.mktemp("ur2") / "qwen2_5_vl", "qwen2_5_vl", seed=2))


def _critic(path: str, **overrides) -> UnifiedReward2:
    params = {"dtype": "float32", "device": "cpu", "video_fps": VIDEO_FPS, "num_images": NUM_IMAGES,
              "batch_size": 2}
    return build_critic(UnifiedReward2, path, **{**params, **overrides})


def _videos(n: int = 2, seed: int = 0) -> torch.Tensor:
    return torch.rand(n, 9, 3, 20, 28, generator=torch.Generator().manual_seed(seed))


def _reference_scores(critic: UnifiedReward2, videos, prompts, decimal_places=1, context="greedy"):
    """[B, 3] by hand: frames int(i * total / n) given to the real processor as images (its own resize), the chat
    text + the answer up to each field (earlier fields: greedy 'd.d' numbers), the model's logits at the read
    positions, expected leading digit (1-5) + expected first decimal (0-9) / 10 after the greedy digit and '.'."""
    processor, model = critic.processor, critic.model
    tok = processor.tokenizer
    int_ids = [tok.convert_tokens_to_ids(str(d)) for d in range(1, 6)]
    dec_ids = [tok.convert_tokens_to_ids(str(d)) for d in range(10)]
    out = []

    def last_logits(text: str, images) -> torch.Tensor:
        inputs = processor(text=[text], images=images, return_tensors="pt", images_kwargs={"do_rescale": False})
        with torch.no_grad():
            return model(**inputs).logits[0, -1].float()

    for video, prompt in zip(videos, prompts):
        total = video.shape[0]
        images = [video[int(i * total / NUM_IMAGES)] for i in range(NUM_IMAGES)]
        text = render_images_prompt(processor, NUM_IMAGES, UR2_PROMPT.format(prompt=prompt))
        segments = UR2_ANSWER.replace("{alignment}", "\x00").replace("{physics}", "\x00").replace(
            "{style}", "\x00").split("\x00")
        text += segments[0]
        row = []
        for k, _ in enumerate(NAMES):
            p_int = torch.softmax(last_logits(text, images)[int_ids], dim=-1)
            score = (p_int * torch.arange(1, 6)).sum()
            digit = str(int(p_int.argmax()) + 1) if context == "greedy" else str(context)
            number = digit
            if decimal_places:
                p_dec = torch.softmax(last_logits(text + digit + ".", images)[dec_ids], dim=-1)
                score = score + 0.1 * (p_dec * torch.arange(10)).sum()
                number = f"{digit}.{int(p_dec.argmax())}" if context == "greedy" else f"{context}.0"
            row.append(score)
            text += number + segments[k + 1]
        out.append(torch.stack(row))
    return torch.stack(out)


def test_scores_equal_the_reference_computation(path):
    critic = _critic(path)
    assert critic.score_names == NAMES and not critic.uses_checks and critic.vision == "images"
    videos = _videos()
    with torch.no_grad():
        grid = critic.score(videos, PROMPTS, [[], ["ignored"]])  # [B, K]
    assert grid.shape == (2, 3) and torch.isfinite(grid).all() and ((grid > 1) & (grid < 6)).all()
    torch.testing.assert_close(grid, _reference_scores(critic, videos, PROMPTS), atol=1e-5, rtol=1e-5)


def test_leading_digit_only_and_fixed_context(path):
    videos = _videos(1, seed=4)
    for overrides in ({"decimal_places": 0}, {"context": 2}):
        critic = _critic(path, **overrides)
        with torch.no_grad():
            grid = critic.score(videos, PROMPTS[:1], [[]])
        expected = _reference_scores(critic, videos, PROMPTS[:1], decimal_places=overrides.get("decimal_places", 1),
                                     context=overrides.get("context", "greedy"))
        torch.testing.assert_close(grid, expected, atol=1e-5, rtol=1e-5)


def test_only_the_frames_taken_as_images_receive_gradient(path):
    # Frozen, gradients and batches equal single pairs: tests/rewards/test_critic_contract.py.
    critic = _critic(path, batch_size=2)
    videos = _videos(3, seed=1).requires_grad_(True)
    critic.score_pairs(videos, ["p one", "p two", "p three"], ["style", "alignment", "physics"]).sum().backward()
    used = sorted({int(i * 9 / NUM_IMAGES) for i in range(NUM_IMAGES)})
    per_frame = videos.grad.abs().sum(dim=(2, 3, 4))
    assert (per_frame[:, used] > 0).all() and (per_frame[:, [f for f in range(9) if f not in used]] == 0).all()


def test_video_input_mode(path):
    critic = _critic(path, vision="video", min_pixels=64, max_pixels=16 * 24)
    videos = _videos(2, seed=5).requires_grad_(True)
    grid = critic.score(videos, PROMPTS, [[], []])
    assert grid.shape == (2, 3) and torch.isfinite(grid).all()
    grid.sum().backward()
    assert (videos.grad.abs().sum(dim=(1, 2, 3, 4)) > 0).all()


def test_bad_parameters_name_the_fix(path, tmp_path):
    with pytest.raises(ValueError, match=r"rewards\.unifiedreward2\.path='.*missing' is not a folder"):
        UnifiedReward2(str(tmp_path / "missing"), inputs=QwenInputs(device="cpu"))
    with pytest.raises(ValueError, match="vision"):
        _critic(path, vision="frames")
    with pytest.raises(ValueError, match="decimal_places"):
        _critic(path, decimal_places=-1)
    with pytest.raises(ValueError, match="cannot take 16 frames"):
        _critic(path, num_images=16).score_pairs(_videos(1), ["p"], ["style"])


def test_preset_builds_the_critic_from_gin(path):
    load_config(
        ["components/rewards/unifiedreward2.gin"],
        [f"rewards.unifiedreward2.path = '{path}'", "rewards.qwen_inputs.dtype = 'float32'",
         "rewards.qwen_inputs.device = 'cpu'"],
    )
    critic = registry.build("REWARD")
    assert isinstance(critic, UnifiedReward2) and critic.score_names == NAMES
    assert (critic.vision, critic.num_images, critic.decimal_places, critic.context) == ("images", 16, 1, "greedy")
    # Per-image resize budget: the checkpoint's image processor.
    assert (critic.image_settings.min_pixels, critic.image_settings.max_pixels) == (64, 1024)
