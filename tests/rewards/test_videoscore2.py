"""The videoscore2 critic on a tiny real Qwen2.5-VL checkpoint (tests/rewards/tiny_qwen)."""

from __future__ import annotations

import math

import pytest
import torch
import torchvision.transforms.functional as TF

from tests.rewards import tiny_qwen
from tests.rewards.tiny_qwen import build_critic
from tvrl_bench.rewards.qwen.inputs import QwenInputs
from tvrl_bench import registry
from tvrl_bench.config import load_config
from tvrl_bench.rewards.qwen.chat import render_prompt
from tvrl_bench.rewards.videoscore2 import VS2_ANSWER, VS2_PROMPT, VideoScore2

VIDEO_FPS = 4.0
NAMES = ("visual_quality", "t2v_alignment", "physical_consistency")
PROMPTS = ["a red ball rolls left", "two cats play"]


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return str(tiny_qwen.save_tiny_qwen(tmp_path_factory.mktemp("vs2") / "qwen2_5_vl", "qwen2_5_vl", seed=1))


def _critic(path: str, **overrides) -> VideoScore2:
    params = {"dtype": "float32", "device": "cpu", "video_fps": VIDEO_FPS, "min_pixels": 64, "max_pixels": 16 * 24,
              "batch_size": 2}
    return build_critic(VideoScore2, path, **{**params, **overrides})


def _videos(n: int = 2, seed: int = 0) -> torch.Tensor:
    return torch.rand(n, 9, 3, 20, 28, generator=torch.Generator().manual_seed(seed))


def _qwen_vl_utils_frames(video: torch.Tensor, fps: float = 2.0, nframes: int | None = None, factor: int = 8,
                          min_pixels: int = 64, max_pixels: int = 16 * 24) -> torch.Tensor:
    """qwen-vl-utils >= 0.0.11 fetch_video, written out: floor-rounded count, uniform indices, smart_resize."""
    total = video.shape[0]
    if nframes is not None:
        n = round(nframes / 2) * 2
    else:
        n = min(min(max(total / VIDEO_FPS * fps, 4), math.floor(min(768, total) / 2) * 2), total)
        n = math.floor(n / 2) * 2
    indices = torch.linspace(0, total - 1, n).round().long()
    h, w = video.shape[-2:]
    h_bar, w_bar = max(factor, round(h / factor) * factor), max(factor, round(w / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(h * w / max_pixels)
        h_bar, w_bar = math.floor(h / beta / factor) * factor, math.floor(w / beta / factor) * factor
    return TF.resize(video[indices], [h_bar, w_bar], interpolation=TF.InterpolationMode.BICUBIC, antialias=True)


def _answer_prefix(template: str, names, filled: dict[str, int], upto: str) -> str:
    """The answer text up to field `upto`, earlier fields holding their digits."""
    values = {n: str(filled[n]) if n in filled else "\x00" for n in names}
    return template.format(**values).split("\x00")[0]


def _reference_scores(critic: VideoScore2, videos, prompts, context="greedy", score_type="expected", nframes=None):
    """[B, 3] by hand: for each field in turn, the real processor on the chat text + the answer up to the field,
    the model's logits at the last position, the softmax over the digit tokens 1-5, the expected digit (or the
    best digit x its probability); the greedy digit is written before the next field."""
    processor, model = critic.processor, critic.model
    digit_ids = [processor.tokenizer.convert_tokens_to_ids(str(d)) for d in range(1, 6)]
    values = torch.arange(1, 6, dtype=torch.float32)
    out = []
    for video, prompt in zip(videos, prompts):
        frames = _qwen_vl_utils_frames(video, nframes=nframes)
        chat = render_prompt(processor, VS2_PROMPT.format(prompt=prompt))
        filled, row = {}, []
        for name in NAMES:
            text = chat + _answer_prefix(VS2_ANSWER, NAMES, filled, name)
            inputs = processor(text=[text], videos=[frames], return_tensors="pt",
                               videos_kwargs={"do_rescale": False, "do_resize": False, "do_sample_frames": False})
            inputs["second_per_grid_ts"] = torch.tensor([2 / 2.0])  # the reference passes fps=2.0
            with torch.no_grad():
                logits = model(**inputs).logits[0, -1, digit_ids].float()
            probs = torch.softmax(logits, dim=-1)
            if score_type == "expected":
                row.append((probs * values).sum())
            else:
                row.append(values[probs.argmax()] * probs.max())
            filled[name] = int(values[probs.argmax()]) if context == "greedy" else context
        out.append(torch.stack(row))
    return torch.stack(out)


def test_scores_equal_the_reference_computation(path):
    critic = _critic(path)
    assert critic.score_names == NAMES and not critic.uses_checks and critic.model_type == "qwen2_5_vl"
    videos = _videos()
    with torch.no_grad():
        grid = critic.score(videos, PROMPTS, [["ignored check"], []])  # [B, K]
    assert grid.shape == (2, 3) and torch.isfinite(grid).all() and ((grid > 1) & (grid < 5)).all()
    torch.testing.assert_close(grid, _reference_scores(critic, videos, PROMPTS), atol=1e-5, rtol=1e-5)


def test_fixed_context_frame_count_and_the_model_cards_soft_score(path):
    videos = _videos(1, seed=3)
    for overrides in ({"context": 4}, {"score_type": "max_normed"}, {"frames": 8}):
        critic = _critic(path, **overrides)
        with torch.no_grad():
            grid = critic.score(videos, PROMPTS[:1], [[]])
        expected = _reference_scores(critic, videos, PROMPTS[:1], context=overrides.get("context", "greedy"),
                                     score_type=overrides.get("score_type", "expected"),
                                     nframes=overrides.get("frames"))
        torch.testing.assert_close(grid, expected, atol=1e-5, rtol=1e-5)
    # 8 of 9 frames at 4 fps is 3.6 fps: the positions differ unless the processor is told fps = 2 (rope_fps).
    with torch.no_grad():
        sampled_rate = _critic(path, frames=8, rope_fps=None).score(videos, PROMPTS[:1], [[]])
    assert not torch.allclose(sampled_rate, grid, atol=1e-6, rtol=0)


def test_right_padding_without_recomputation_equals_the_left_padded_batches(path):
    # Frozen, gradients and batches equal single pairs: tests/rewards/test_critic_contract.py.
    videos = _videos(3, seed=1)
    questions = ["physical_consistency", "visual_quality", "t2v_alignment"]
    prompts = ["p one", "p two", "p three"]
    batched = _critic(path, batch_size=2).score_pairs(videos.requires_grad_(True), prompts, questions)
    right = _critic(path, padding_side="right", recompute_in_backward=False)
    torch.testing.assert_close(right.score_pairs(videos.detach(), prompts, questions), batched.detach(),
                               atol=1e-5, rtol=1e-5)


def test_bad_parameters_name_the_fix(path, tmp_path):
    with pytest.raises(ValueError, match=r"rewards\.videoscore2\.path='.*missing' is not a folder"):
        VideoScore2(str(tmp_path / "missing"), inputs=QwenInputs(device="cpu"))
    with pytest.raises(ValueError, match="answer_template"):
        _critic(path, answer_template="visual quality: {visual_quality}")
    with pytest.raises(ValueError, match="prompt_template"):
        _critic(path, prompt_template="no prompt field")
    with pytest.raises(ValueError, match="context"):
        _critic(path, context=7)
    with pytest.raises(ValueError, match="score_type"):
        _critic(path, score_type="argmax")
    critic = _critic(path)
    with pytest.raises(ValueError, match="unknown score names"):
        critic.score_pairs(_videos(1), ["p"], ["motion"])


def test_preset_builds_the_critic_from_gin(path):
    load_config(
        ["components/rewards/videoscore2.gin"],
        [f"rewards.videoscore2.path = '{path}'", "rewards.qwen_inputs.dtype = 'float32'",
         "rewards.qwen_inputs.device = 'cpu'"],
    )
    critic = registry.build("REWARD")
    assert isinstance(critic, VideoScore2) and critic.score_names == NAMES
    rules = critic.video_rules
    assert (rules.fps, rules.count_rounding, rules.factor) == (2.0, "floor", 8)
    assert (rules.min_pixels, rules.max_pixels) == (128 * 64, 768 * 64)  # qwen-vl-utils' token budgets x factor^2
    assert critic.rope_fps == 2.0 and critic.video_fps == 24.0 and critic.context == "greedy"
