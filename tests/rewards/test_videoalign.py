"""The videoalign critic on a tiny VideoReward checkpoint in the released layout (tests/rewards/tiny_videoalign)."""

from __future__ import annotations

import math

import pytest
import torch
import torchvision.transforms.functional as TF

from tests.rewards import tiny_qwen
from tests.rewards.tiny_qwen import build_critic
from tests.rewards.tiny_videoalign import STATS, save_tiny_videoalign
from tvrl_bench.rewards.qwen.inputs import QwenInputs
from tvrl_bench import registry
from tvrl_bench.config import load_config
from tvrl_bench.rewards.videoalign import VideoAlign
from tvrl_bench.rewards.videoalign_prompt import VIDEOALIGN_PROMPT

VIDEO_FPS = 4.0
PROMPTS = ["a red ball rolls left", "two cats", "night city"]
# A short template with the three special tokens keeps the tiny byte-level sequences short where the exact
# published prompt is not what is under test.
SHORT = "Rate the video for '{prompt}'. VQ: <|VQ_reward|>\nEND\nMQ: <|MQ_reward|>\nEND\nTA: <|TA_reward|>\nEND\n"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_videoalign(tmp_path_factory.mktemp("videoalign"), fmt="full")


def _critic(tiny, **overrides) -> VideoAlign:
    params = {"dtype": "float32", "device": "cpu", "video_fps": VIDEO_FPS, "min_pixels": 64, "batch_size": 2}
    return build_critic(VideoAlign, str(tiny.reward_dir), **{**params, **overrides})


def _videos(n: int = 3, seed: int = 0, frames: int = 9) -> torch.Tensor:
    return torch.rand(n, frames, 3, 20, 28, generator=torch.Generator().manual_seed(seed))


def _vendored_frames(video: torch.Tensor, fps: float, min_pixels: int, max_pixels: int, factor: int = 8):
    """VideoAlign's vendored qwen-vl-utils, written out: frame count, uniform indices, smart_resize, resize."""
    total = video.shape[0]
    n = total / VIDEO_FPS * fps
    n = min(max(n, math.ceil(4 / 2) * 2), math.floor(min(768, total) / 2) * 2)
    n = min(round(n / 2) * 2, total)
    indices = torch.linspace(0, total - 1, n).round().long()
    h, w = video.shape[-2:]
    h_bar, w_bar = max(factor, round(h / factor) * factor), max(factor, round(w / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(h * w / max_pixels)
        h_bar, w_bar = math.floor(h / beta / factor) * factor, math.floor(w / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (h * w))
        h_bar, w_bar = math.ceil(h * beta / factor) * factor, math.ceil(w * beta / factor) * factor
    frames = TF.resize(video[indices], [h_bar, w_bar], interpolation=TF.InterpolationMode.BICUBIC, antialias=True)
    return frames, indices.tolist(), (h_bar, w_bar)


def _reference_rewards(tiny, videos, prompts, normalize=True, output_dim=1, template=VIDEOALIGN_PROMPT):
    """[B, 3] by hand: the real processor's outputs, the live-LoRA model with its default (sequential) positions,
    hidden states at the special tokens through the head, normalised with the statistics."""
    processor = tiny_qwen.build_processor("qwen2_vl", tiny.tokenizer)  # the real processor, built here
    frames = [_vendored_frames(v, 2.0, 64, 16 * 24)[0] for v in videos]
    texts = [
        processor.apply_chat_template(
            [{"role": "user", "content": [{"type": "video"},
                                          {"type": "text", "text": template.format(prompt=p)}]}],
            add_generation_prompt=True, tokenize=False,
        )
        for p in prompts
    ]
    inputs = processor(
        text=texts, videos=frames, padding=True, padding_side="right", return_tensors="pt",
        videos_kwargs={"do_rescale": False, "do_resize": False, "do_sample_frames": False},
    )
    model = tiny.model
    ids = inputs["input_ids"]
    with torch.no_grad():
        embeds = model.model.language_model.embed_tokens(ids)
        visual = model.model.visual(inputs["pixel_values_videos"], grid_thw=inputs["video_grid_thw"])
        embeds[ids == processor.video_token_id] = visual.pooler_output
        # No position ids: the language model's default sequential positions, as the reference's forward.
        hidden = model.model.language_model(inputs_embeds=embeds, attention_mask=inputs["attention_mask"])
        hidden = hidden.last_hidden_state
        special = torch.isin(ids, torch.tensor(tiny.tokenizer.convert_tokens_to_ids(
            ["<|VQ_reward|>", "<|MQ_reward|>", "<|TA_reward|>"])))
        rewards = tiny.head(hidden[special].reshape(len(prompts), 3, -1))
    rewards = rewards[..., 0] if output_dim == 1 else rewards.diagonal(dim1=1, dim2=2)
    if normalize:
        mean = torch.tensor([STATS["VQ_mean"], STATS["MQ_mean"], STATS["TA_mean"]])
        std = torch.tensor([STATS["VQ_std"], STATS["MQ_std"], STATS["TA_std"]])
        rewards = (rewards - mean) / std
    return rewards


def test_preprocessing_follows_the_vendored_qwen_vl_utils(tiny):
    critic = _critic(tiny)
    rules = critic.video_rules
    assert (rules.fps, rules.nframes, rules.count_rounding, rules.max_pixels) == (2.0, None, "round", 16 * 24)
    video = _videos(1)[0]
    frames, indices, size = _vendored_frames(video, 2.0, 64, 16 * 24)
    assert rules.frame_indices(9, VIDEO_FPS) == indices == [0, 3, 5, 8]
    assert rules.frame_size(4, 20, 28) == size == (16, 16)
    # Counts round (not floor) to a multiple of 2 and are capped at the video length.
    assert rules.num_frames(11, 4.0) == 6 and rules.num_frames(5, 1.0) == 4


def test_scores_equal_the_reference_computation(tiny):
    critic = _critic(tiny)
    assert critic.score_names == ("VQ", "MQ", "TA") and not critic.uses_checks
    videos = _videos(2)
    with torch.no_grad():
        grid = critic.score(videos, PROMPTS[:2], [[], []])  # [B, K]; checks are ignored
    assert grid.shape == (2, 3) and torch.isfinite(grid).all()
    expected = _reference_rewards(tiny, videos, PROMPTS[:2])
    torch.testing.assert_close(grid, expected, atol=1e-4, rtol=1e-4)
    # Overall = VQ + MQ + TA of the normalised scores, as the reference reports it.
    overall = _critic(tiny, score_names=("VQ", "MQ", "TA", "Overall"), prompt_template=SHORT)
    videos = _videos()
    with torch.no_grad():
        four = overall.score(videos, PROMPTS, [[] for _ in PROMPTS])
    short = _reference_rewards(tiny, videos, PROMPTS, template=SHORT)
    torch.testing.assert_close(four[:, :3], short, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(four[:, 3], short.sum(dim=1), atol=1e-4, rtol=1e-4)


def test_lora_checkpoint_format_three_output_head_and_raw_scores(tmp_path):
    tiny = save_tiny_videoalign(tmp_path, fmt="lora", output_dim=3, step=7, seed=3)
    critic = _critic(tiny, normalize=False, prompt_template=SHORT)
    assert critic.head.out_features == 3
    videos = _videos(2, seed=2)
    with torch.no_grad():
        grid = critic.score(videos, PROMPTS[:2], [[], []])
    expected = _reference_rewards(tiny, videos, PROMPTS[:2], normalize=False, output_dim=3,
                                  template=SHORT)
    torch.testing.assert_close(grid, expected, atol=1e-4, rtol=1e-4)


def test_bad_parameters_name_the_fix(tiny, tmp_path):
    with pytest.raises(ValueError, match=r"rewards\.videoalign\.path='.*' is not a folder"):
        VideoAlign(str(tmp_path / "missing"), inputs=QwenInputs(device="cpu"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no model_config.json"):
        VideoAlign(str(tmp_path / "empty"), inputs=QwenInputs(device="cpu"))
    with pytest.raises(ValueError, match=r"checkpoint_step=3 is not in .*available steps: \[12\]"):
        _critic(tiny, checkpoint_step=3)
    with pytest.raises(ValueError, match="base_path"):
        _critic(tiny, base_path=str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="score_names"):
        _critic(tiny, score_names=("VQ", "aesthetics"))
    critic = _critic(tiny)
    with pytest.raises(ValueError, match="unknown score names"):
        critic.score_pairs(_videos(1), ["p"], ["quality"])


def test_preset_builds_the_critic_from_gin(tiny):
    load_config(
        ["components/rewards/videoalign.gin"],
        [
            f"rewards.videoalign.path = '{tiny.reward_dir}'",
            f"rewards.videoalign.base_path = '{tiny.base_dir}'",
            "rewards.qwen_inputs.dtype = 'float32'",
            "rewards.qwen_inputs.device = 'cpu'",
            "rewards.qwen_inputs.min_pixels = 64",
        ],
    )
    critic = registry.build("REWARD")
    assert isinstance(critic, VideoAlign)
    assert critic.score_names == ("VQ", "MQ", "TA") and critic.normalize and critic.video_fps == 24.0
    assert critic.video_rules.fps == 2.0 and critic.video_rules.max_pixels == 16 * 24  # from model_config.json

