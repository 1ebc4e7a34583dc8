"""mp4 writing and reading: sizes, tiny-video upscaling, values through H.264."""

from __future__ import annotations

import torch

from tvrl_bench.videoio import read_video, write_mp4


def test_round_trip_keeps_frames_and_values(tmp_path):
    video = torch.zeros(6, 3, 32, 48)
    video[:, 0, 8:24, 8:24] = 1.0  # a red square
    back = read_video(write_mp4(video, tmp_path / "v.mp4", fps=8))
    assert back.shape == (6, 3, 32, 48)
    assert (back - video).abs().mean() < 0.02


def test_tiny_videos_are_upscaled_and_odd_sizes_padded(tmp_path):
    tiny = torch.rand(4, 3, 16, 16)
    assert read_video(write_mp4(tiny, tmp_path / "tiny.mp4", min_side=128)).shape == (4, 3, 128, 128)
    odd = torch.rand(3, 3, 15, 21)
    assert read_video(write_mp4(odd, tmp_path / "odd.mp4")).shape == (3, 3, 16, 22)
