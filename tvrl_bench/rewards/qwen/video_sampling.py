"""Which frames a Qwen video processor keeps and the size it resizes them to (steps 1 and 2 of qwen/video.py).

`sample_frame_indices` follows each family's own frame-sampling rule (`QwenVideoSettings.family`: "qwen3_vl" or
"qwen2_vl"); `resized_size` is the family's `smart_resize`: both sides multiples of `factor = patch_size *
merge_size`, the pixel count within [min_pixels, max_pixels] (for "qwen3_vl" the budget counts all frames, for
"qwen2_vl" one frame), with the per-frame cap where `cap_pixels_per_frame` is set. Index and size arithmetic
only: nothing here is differentiated.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings


def sample_frame_indices(settings: QwenVideoSettings, total_frames: int, video_fps: float) -> list[int]:
    """Indices of the frames the processor keeps from a video of `total_frames` frames at `video_fps`.

    "qwen3_vl": n = num_frames if given, else from fps: int(total / video_fps * fps) clamped to
    [min_frames, min(max_frames, total)]; else all frames (clamped to [min_frames, max_frames]);
    indices = round(linspace(0, total - 1, n)).
    "qwen2_vl": n = num_frames rounded to a multiple of temporal_patch_size if given, else from fps:
    total / video_fps * fps clamped to [min_frames, floor(min(max_frames, total) / tps) * tps, total], floored
    to a multiple of tps; indices = int(arange(0, total, total / n)). Without sampling: all frames.
    """
    if total_frames < 1:
        raise ValueError("a video needs at least one frame")
    if not settings.do_sample_frames:
        return list(range(total_frames))
    if settings.num_frames is not None and settings.fps is not None:
        raise ValueError("num_frames and fps are mutually exclusive frame-sampling settings; set one to None")
    if settings.family == "qwen3_vl":
        n = settings.num_frames
        if n is None and settings.fps is not None:
            n = int(total_frames / video_fps * settings.fps)
            n = min(max(n, settings.min_frames), settings.max_frames, total_frames)
        if n is None:
            n = min(max(total_frames, settings.min_frames), settings.max_frames)
        return np.linspace(0, total_frames - 1, n).round().astype(int).tolist()

    tps = settings.temporal_patch_size
    n = settings.num_frames
    if n is not None:
        n = round(n / tps) * tps
    elif settings.fps is not None:
        max_frames = math.floor(min(settings.max_frames, total_frames) / tps) * tps
        n_float = total_frames / video_fps * settings.fps
        n_float = min(max(n_float, settings.min_frames), max_frames, total_frames)
        n = math.floor(n_float / tps) * tps
    if n is None:
        return list(range(total_frames))
    if n > total_frames or n < 1:
        raise ValueError(
            f"cannot sample {n} frames from a video of {total_frames} frames (Qwen2-VL sampling rounds the count to "
            f"a multiple of temporal_patch_size={tps}); lower the frame count or the fps, or give longer videos"
        )
    return torch.arange(0, total_frames, total_frames / n).int().tolist()


def _smart_resize_qwen3(
    num_frames: int, height: int, width: int, s: QwenVideoSettings, max_pixels: int
) -> tuple[int, int]:
    factor, tf = s.factor, s.temporal_patch_size
    if num_frames < tf:
        raise ValueError(f"{num_frames} sampled frames is fewer than temporal_patch_size={tf}; sample more frames")
    if height < factor or width < factor:
        scale = max(factor / height, factor / width)
        height, width = int(height * scale), int(width * scale)
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio {max(height, width) / min(height, width):.1f} exceeds 200")
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    t_bar = round(num_frames / tf) * tf
    if t_bar * h_bar * w_bar > max_pixels:
        beta = math.sqrt((num_frames * height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif t_bar * h_bar * w_bar < s.min_pixels:
        beta = math.sqrt(s.min_pixels / (num_frames * height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def _smart_resize_qwen2(height: int, width: int, s: QwenVideoSettings, max_pixels: int) -> tuple[int, int]:
    factor = s.factor
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio {max(height, width) / min(height, width):.1f} exceeds 200")
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < s.min_pixels:
        beta = math.sqrt(s.min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def resized_size(settings: QwenVideoSettings, num_frames: int, height: int, width: int) -> tuple[int, int]:
    """(height, width) the processor resizes `num_frames` sampled frames of height x width to (smart_resize)."""
    s = settings
    if not s.do_resize:
        return height, width
    if s.family == "qwen3_vl":
        max_pixels = s.max_pixels
        if s.cap_pixels_per_frame:
            frame_cap = s.max_video_tokens * s.factor * s.factor
            per_frame = max(min(frame_cap, s.max_pixels // num_frames), int(s.min_pixels * 1.05))
            max_pixels = per_frame * num_frames
        return _smart_resize_qwen3(num_frames, height, width, s, max_pixels)
    max_pixels = s.max_pixels
    if s.cap_pixels_per_frame:
        total = int(s.max_video_tokens * s.factor * s.factor * 0.9)
        max_pixels = max(min(max_pixels, total * s.temporal_patch_size // num_frames), int(s.min_pixels * 1.05))
    return _smart_resize_qwen2(height, width, s, max_pixels)
