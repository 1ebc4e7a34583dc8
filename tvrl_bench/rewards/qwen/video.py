"""Differentiable Qwen video preprocessing: a video tensor -> `pixel_values_videos`, `video_grid_thw`.

Reproduces, in differentiable torch, what transformers' video processors produce:
`Qwen3VLVideoProcessor` (family "qwen3_vl": Qwen3.5, Qwen3-VL) and `Qwen2VLVideoProcessor` (family "qwen2_vl":
Qwen2-VL, Qwen2.5-VL). The steps, in the processors' order:

1. frame sampling (`video_sampling.sample_frame_indices`): the family's own rule for `num_frames` / `fps`;
2. resize of every sampled frame to the size `smart_resize` picks (`video_sampling.resized_size`: both sides
   multiples of `factor = patch_size * merge_size`, pixel count within [min_pixels, max_pixels]; for "qwen3_vl"
   the budget counts all frames, for "qwen2_vl" one frame), by the processor's interpolation (bicubic with antialias,
   `align_corners=False`, i.e. torchvision's `resize` on float tensors = `F.interpolate(..., antialias=True)`);
3. normalisation `(x - mean) / std` (the processor's rescale by 1/255 is the identity here: inputs are in [0, 1]);
4. temporal padding with copies of the last frame to a multiple of `temporal_patch_size`;
5. patch flattening: rows ordered (t, h-block, w-block, h-in-block, w-in-block) with blocks of `merge_size`
   patches, each row (channel, temporal, patch-row, patch-col) -> `[grid_t * grid_h * grid_w,
   3 * temporal_patch_size * patch_size**2]`.

Gradients flow from `pixel_values_videos` back to the video pixels: indexing, interpolation, normalisation and
reshapes are all differentiable.

Input convention under which this equals the real processors (tested to 1e-6 in tests/rewards/qwen/test_video.py):
- Exact (bitwise up to float rounding): pass the same float32 frames in [0, 1] to the processor with
  `do_rescale=False`; the processor then runs the very same interpolation and normalisation.
- Equal to ~1e-7: pass the frames scaled to [0, 255] as float32 (`video * 255`) with the processor's default
  `do_rescale=True, rescale_factor=1/255` (the processor fuses rescale into the normalisation constants).
- uint8 frames (`round(video * 255)`) match only when no resize happens (then frames k/255 match to ~1e-7): a
  resize of uint8 frames runs torchvision's fixed-point uint8 kernel and rounds (and clamps) the result to integer
  levels, a few levels away from any float pipeline, which a differentiable pipeline cannot reproduce.
Videos are cast to float32 first (a bf16 decoder output is upcast; float64 stays float64 for gradient checks).
The settings these steps follow are `QwenVideoSettings` (qwen/video_settings.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import torch
import torch.nn.functional as F

from tvrl_bench.rewards.qwen.video_sampling import resized_size, sample_frame_indices
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings


@dataclass
class QwenVideoInputs:
    """Preprocessed videos, ready for a Qwen VL model.

    pixel_values_videos[N, 3 * temporal_patch_size * patch_size**2] (float32, all videos concatenated),
    video_grid_thw[V, 3] (long), and per video the sampled frame indices and the source video's fps
    (what the prompt layout needs for timestamps, and Qwen2.5-VL for `second_per_grid_ts`).
    """

    pixel_values_videos: torch.Tensor
    video_grid_thw: torch.Tensor
    frame_indices: list[list[int]] = field(default_factory=list)
    video_fps: list[float] = field(default_factory=list)
    total_frames: list[int] = field(default_factory=list)

    def sampled_fps(self) -> list[float]:
        """Frames per second after sampling: len(indices) / total_frames * video_fps (transformers' definition)."""
        return [len(i) / t * f for i, t, f in zip(self.frame_indices, self.total_frames, self.video_fps)]

    def second_per_grid_ts(self, temporal_patch_size: int) -> list[float]:
        """Seconds covered by one temporal grid step per video (Qwen2.5-VL's rope input)."""
        return [temporal_patch_size / fps for fps in self.sampled_fps()]


def resize_frames(frames: torch.Tensor, size: tuple[int, int], interpolation: str = "bicubic") -> torch.Tensor:
    """frames[F, C, H, W] -> [F, C, h, w], antialiased like torchvision's tensor resize; unchanged if same size."""
    if tuple(frames.shape[-2:]) == tuple(size):
        return frames
    return F.interpolate(frames, size=list(size), mode=interpolation, align_corners=False, antialias=True)


def normalize_frames(frames: torch.Tensor, settings: QwenVideoSettings) -> torch.Tensor:
    """frames[F, 3, H, W] in [0, 1] -> (frames - mean) / std per channel (identity if do_normalize is off)."""
    if not settings.do_normalize:
        return frames
    mean = torch.tensor(settings.image_mean, dtype=frames.dtype, device=frames.device)[:, None, None]
    std = torch.tensor(settings.image_std, dtype=frames.dtype, device=frames.device)[:, None, None]
    return (frames - mean) / std


def patchify(frames: torch.Tensor, settings: QwenVideoSettings) -> tuple[torch.Tensor, tuple[int, int, int]]:
    """frames[F, C, H, W] (H, W multiples of patch_size * merge_size) -> (patches[T*Hp*Wp, C*tps*p*p], (T, Hp, Wp)).

    The last frame is repeated to fill the final temporal patch.
    """
    p, m, tps = settings.patch_size, settings.merge_size, settings.temporal_patch_size
    num_frames, channels, height, width = frames.shape
    if height % (p * m) or width % (p * m):
        raise ValueError(f"frame size {height}x{width} is not a multiple of patch_size*merge_size={p * m}")
    if pad := -num_frames % tps:
        frames = torch.cat([frames, frames[-1:].expand(pad, -1, -1, -1)], dim=0)
        num_frames += pad
    grid_t, grid_h, grid_w = num_frames // tps, height // p, width // p
    patches = frames.reshape(grid_t, tps, channels, grid_h // m, m, p, grid_w // m, m, p)
    # -> (t, h-block, w-block, h-in-block, w-in-block, channel, temporal, patch row, patch col)
    patches = patches.permute(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return patches.reshape(grid_t * grid_h * grid_w, channels * tps * p * p), (grid_t, grid_h, grid_w)


def preprocess_video(video: torch.Tensor, settings: QwenVideoSettings, video_fps: float) -> QwenVideoInputs:
    """One video[F, 3, H, W] in [0, 1] at `video_fps` -> QwenVideoInputs with one grid row. Differentiable."""
    if video.dim() != 4 or video.shape[1] != 3:
        raise ValueError(f"expected video[F, 3, H, W], got shape {tuple(video.shape)}")
    total = int(video.shape[0])
    indices = sample_frame_indices(settings, total, video_fps)
    frames = video[torch.tensor(indices, device=video.device)]
    if frames.dtype != torch.float64:  # float64 is kept for gradient checks; everything else runs in float32
        frames = frames.to(torch.float32)
    size = resized_size(settings, len(indices), int(frames.shape[-2]), int(frames.shape[-1]))
    frames = resize_frames(frames, size, settings.interpolation)
    frames = normalize_frames(frames, settings)
    patches, grid = patchify(frames, settings)
    return QwenVideoInputs(
        pixel_values_videos=patches,
        video_grid_thw=torch.tensor([grid], dtype=torch.long),
        frame_indices=[indices],
        video_fps=[float(video_fps)],
        total_frames=[total],
    )


def concat_video_inputs(parts: Sequence[QwenVideoInputs]) -> QwenVideoInputs:
    """Several preprocessed videos -> one batch: pixel values concatenated, grids stacked, metadata listed."""
    if not parts:
        raise ValueError("concat_video_inputs needs at least one QwenVideoInputs")
    return QwenVideoInputs(
        pixel_values_videos=torch.cat([p.pixel_values_videos for p in parts], dim=0),
        video_grid_thw=torch.cat([p.video_grid_thw for p in parts], dim=0),
        frame_indices=[i for p in parts for i in p.frame_indices],
        video_fps=[f for p in parts for f in p.video_fps],
        total_frames=[t for p in parts for t in p.total_frames],
    )


def preprocess_videos(
    videos: torch.Tensor | Sequence[torch.Tensor],
    settings: QwenVideoSettings,
    video_fps: float | Sequence[float],
) -> QwenVideoInputs:
    """videos[B, F, 3, H, W] (or a list of [F_i, 3, H_i, W_i]) in [0, 1] -> one QwenVideoInputs for the batch.

    `video_fps` is one frame rate for all videos or one per video. Differentiable w.r.t. every video.
    """
    videos = list(videos) if not isinstance(videos, torch.Tensor) else list(videos.unbind(0))
    rates = [float(video_fps)] * len(videos) if isinstance(video_fps, (int, float)) else [float(f) for f in video_fps]
    if len(rates) != len(videos):
        raise ValueError(f"got {len(videos)} videos but {len(rates)} frame rates")
    return concat_video_inputs([preprocess_video(v, settings, f) for v, f in zip(videos, rates)])
