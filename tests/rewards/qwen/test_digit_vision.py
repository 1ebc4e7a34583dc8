"""Vision input of the digit-score critics: qwen-vl-utils rules and image settings from the shared settings, the
vision inputs of a subset of a batch's videos, and the two ways in (`VideoVision`, `ImageVision`)."""

from __future__ import annotations

import torch

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.digit_vision import ImageVision, VideoVision, image_settings, select_vision, video_rules
from tvrl_bench.rewards.qwen.inputs import QwenInputs
from tvrl_bench.rewards.qwen.layout import QwenVisionTokens
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings


def test_video_rules_default_to_the_references_and_follow_the_shared_settings():
    rules = video_rules(QwenInputs(), factor=28, count_rounding="floor", max_total_tokens=128000)
    assert (rules.fps, rules.nframes, rules.count_rounding) == (2.0, None, "floor")
    assert (rules.min_pixels, rules.max_pixels, rules.total_pixels) == (128 * 784, 768 * 784, 128000 * 784 * 0.9)
    counted = video_rules(QwenInputs(frames=8, max_pixels=200704), 28, "floor", None)
    assert (counted.fps, counted.nframes, counted.max_pixels, counted.total_pixels) == (None, 8, 200704, None)
    assert video_rules(QwenInputs(fps=1.0), 28, "round", None).fps == 1.0


def test_image_settings_keep_the_processors_budget_unless_the_settings_set_one():
    processor = tiny_qwen.build_processor("qwen2_5_vl").image_processor
    default = image_settings(processor, QwenInputs())
    assert (default.min_pixels, default.max_pixels) == (64, 1024)
    assert image_settings(processor, QwenInputs(max_pixels=256)).max_pixels == 256


def test_select_vision_takes_the_rows_pixels_and_grids():
    grids = torch.tensor([[1, 2, 2], [1, 2, 4], [2, 2, 2]])  # 4, 8 and 8 patches
    pixels = torch.arange(20.0)[:, None].expand(20, 3)
    seconds = torch.tensor([1.0, 2.0, 3.0])
    vision = {"pixel_values_videos": pixels, "video_grid_thw": grids, "second_per_grid_ts": seconds}
    picked = select_vision(vision, [2, 0], "video", num_images=1)
    assert picked["pixel_values_videos"][:, 0].tolist() == list(range(12, 20)) + list(range(0, 4))
    assert picked["video_grid_thw"].tolist() == [[2, 2, 2], [1, 2, 2]]
    assert picked["second_per_grid_ts"].tolist() == [3.0, 1.0]
    images = {"pixel_values": pixels[:16], "image_grid_thw": torch.tensor([[1, 2, 2]] * 4)}  # 2 videos x 2 images
    second = select_vision(images, [1], "images", num_images=2)
    assert second["pixel_values"][:, 0].tolist() == list(range(8, 16)) and second["image_grid_thw"].shape == (2, 3)


def _video_vision(rope_fps, seconds_per_grid=True) -> VideoVision:
    processor = tiny_qwen.build_processor("qwen2_5_vl")
    rules = video_rules(QwenInputs(min_pixels=64, max_pixels=16 * 24), 8, "floor", None)
    settings = QwenVideoSettings.from_processor(processor.video_processor)
    return VideoVision(rules, settings, 4.0, QwenVisionTokens.from_processor(processor), seconds_per_grid, rope_fps)


def test_video_vision_is_one_block_per_video_by_qwen_vl_utils_rules():
    vision = _video_vision(rope_fps=4.0)
    videos = torch.rand(2, 8, 3, 16, 24).requires_grad_(True)
    kwargs, texts = vision.encode(videos, torch.device("cpu"))
    # 8 frames at 4 fps sampled at 2 fps: 4 frames, 2 temporal patches; 16 x 24 fits the budget: 4 x 6 patches
    assert kwargs["video_grid_thw"].tolist() == [[2, 4, 6]] * 2 and kwargs["pixel_values_videos"].shape[0] == 96
    assert kwargs["second_per_grid_ts"].tolist() == [0.5, 0.5]  # temporal patch 2 / rope_fps 4
    assert vision.per_video == 1 and [len(t) for t in texts] == [1, 1]
    assert [t[0].count("<|video_pad|>") for t in texts] == [12, 12]  # 48 patches / merge 2 x 2
    kwargs["pixel_values_videos"].sum().backward()
    assert videos.grad.abs().sum() > 0
    picked = vision.select(kwargs, [1])
    assert picked["video_grid_thw"].tolist() == [[2, 4, 6]] and picked["second_per_grid_ts"].tolist() == [0.5]
    plain, _ = _video_vision(rope_fps=None, seconds_per_grid=False).encode(videos.detach(), torch.device("cpu"))
    assert "second_per_grid_ts" not in plain


def test_image_vision_takes_num_images_frames_as_separate_images():
    processor = tiny_qwen.build_processor("qwen2_5_vl")
    settings = image_settings(processor.image_processor, QwenInputs(max_pixels=16 * 24))
    vision = ImageVision(settings, 2, QwenVisionTokens.from_processor(processor))
    videos = torch.rand(2, 8, 3, 16, 24).requires_grad_(True)
    kwargs, placeholders = vision.encode(videos, torch.device("cpu"))
    assert kwargs["image_grid_thw"].tolist() == [[1, 4, 6]] * 4 and kwargs["pixel_values"].shape[0] == 96
    assert vision.per_video == 2 and placeholders == [["<|image_pad|>" * 6] * 2] * 2
    kwargs["pixel_values"].sum().backward()
    touched = videos.grad.abs().sum(dim=(0, 2, 3, 4)).nonzero().flatten().tolist()
    assert touched == [0, 4]  # frames int(i * 8 / 2)
    assert vision.select(kwargs, [1])["image_grid_thw"].shape == (2, 3)
