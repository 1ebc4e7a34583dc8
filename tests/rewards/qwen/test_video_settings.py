"""The Qwen video processor settings read from real (tiny) processors, and a critic's overrides."""

from __future__ import annotations

import pytest

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings


def test_settings_from_a_saved_processor_and_overrides(tmp_path):
    from transformers import AutoProcessor

    folder = tiny_qwen.save_tiny_qwen(tmp_path / "ckpt", "qwen3_5")
    settings = QwenVideoSettings.from_processor(AutoProcessor.from_pretrained(folder).video_processor)
    assert (settings.family, settings.patch_size, settings.merge_size, settings.temporal_patch_size) == (
        "qwen3_vl", 4, 2, 2)
    assert (settings.min_pixels, settings.max_pixels) == (
        tiny_qwen.QWEN3_SIZE["shortest_edge"], tiny_qwen.QWEN3_SIZE["longest_edge"])
    changed = settings.with_overrides(num_frames=6, max_pixels=4096)
    assert (changed.num_frames, changed.fps, changed.max_pixels, changed.do_sample_frames) == (6, None, 4096, True)
    with pytest.raises(ValueError, match="not both"):
        settings.with_overrides(num_frames=6, fps=1.0)
    with pytest.raises(TypeError, match="unsupported video processor"):
        QwenVideoSettings.from_processor(object())


def test_image_settings_from_a_real_image_processor():
    from tvrl_bench.rewards.qwen.video_settings import image_settings_from_processor

    settings = image_settings_from_processor(tiny_qwen.build_processor("qwen2_5_vl").image_processor)
    assert (settings.family, settings.patch_size, settings.merge_size, settings.temporal_patch_size) == (
        "qwen2_vl", 4, 2, 2)
    assert (settings.min_pixels, settings.max_pixels, settings.do_sample_frames) == (64, 1024, False)
    assert settings.interpolation == "bicubic"
