"""Vision input of the digit-score critics: qwen-vl-utils rules and image settings from the shared settings, and
the vision inputs of a subset of a batch's videos."""

from __future__ import annotations

import torch

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.digit_vision import image_settings, select_vision, video_rules
from tvrl_bench.rewards.qwen.inputs import QwenInputs


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
