"""qwen-vl-utils' video rules in differentiable torch: frame sampling, resize size, and frames fed as images.

Several critics were trained and published with Qwen's `qwen_vl_utils.process_vision_info` rather than the
transformers video processor: it reads the video, samples frames and resizes them itself, and the processor then
only normalises and patchifies (its own resize is a no-op on frames that already fit). This module reproduces
those rules so the same shared pieces (`qwen_video.resize_frames`, `normalize_frames`, `patchify`) produce the
model inputs differentiably:

- `QwenVLUtilsVideo` (`fetch_video`): the frame count `smart_nframes` (by `fps` from the video's rate, clamped to
  [min_frames, max_frames] and the video length, then made a multiple of 2; or a fixed `nframes`), frame indices
  `round(linspace(0, total - 1, n))`, and the frame size `smart_resize(h, w, factor, min_pixels, max_pixels)`
  (both sides multiples of `factor` = patch * merge, at least `factor`). Two releases differ in the count:
  `count_rounding="round"` (the copy VideoAlign vendors, qwen-vl-utils 0.0.8) rounds to a multiple of 2,
  `"floor"` (qwen-vl-utils >= 0.0.11, used by VideoScore2) floors after capping at the video length. The newer
  release also caps max_pixels by `total_pixels / n * 2`.
- `sample_images` (a video fed as separate images, UnifiedReward-2.0's pointwise video scoring): `n` frames at
  indices `int(i * total / n)`, each resized like an image by the processor (`video_sampling.resized_size` with a
  per-image pixel budget) and patchified as a one-frame image (repeated to the temporal patch size).

Frames are float in [0, 1]; the references read uint8 frames and resize them with torchvision's uint8 kernel, which
a differentiable pipeline cannot reproduce bit for bit (see `qwen_video`): the float resize here is the
differentiable counterpart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import torch

from tvrl_bench.rewards.qwen.video import (
    QwenVideoInputs,
    QwenVideoSettings,
    concat_video_inputs,
    normalize_frames,
    patchify,
    resize_frames,
)
from tvrl_bench.rewards.qwen.video_sampling import resized_size

FRAME_FACTOR = 2
COUNT_ROUNDINGS = ("round", "floor")


def _round_by(x: float, f: int) -> int:
    return round(x / f) * f


def _floor_by(x: float, f: int) -> int:
    return math.floor(x / f) * f


def _ceil_by(x: float, f: int) -> int:
    return math.ceil(x / f) * f


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: float) -> tuple[int, int]:
    """qwen-vl-utils' `smart_resize`: (h, w) multiples of `factor` (at least `factor`), pixels within the budget."""
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio {max(height, width) / min(height, width):.1f} exceeds 200")
    h_bar = max(factor, _round_by(height, factor))
    w_bar = max(factor, _round_by(width, factor))
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = _floor_by(height / beta, factor)
        w_bar = _floor_by(width / beta, factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = _ceil_by(height * beta, factor)
        w_bar = _ceil_by(width * beta, factor)
    return h_bar, w_bar


@dataclass(frozen=True)
class QwenVLUtilsVideo:
    """`fetch_video`'s sampling and resizing choices (one frozen record per critic).

    fps / nframes: sample by rate (frames per second of video time) or a fixed count (exclusive).
    factor: patch_size * merge_size of the model (28 for Qwen2/2.5-VL). min_pixels / max_pixels: per-frame budget.
    total_pixels: the newer release's cap over all frames (max_pixels <= total_pixels / n * 2); None: no cap.
    """

    fps: float | None = 2.0
    nframes: int | None = None
    min_frames: int = 4
    max_frames: int = 768
    count_rounding: str = "floor"
    factor: int = 28
    min_pixels: int = 128 * 28 * 28
    max_pixels: int = 768 * 28 * 28
    total_pixels: float | None = None

    def __post_init__(self) -> None:
        if (self.fps is None) == (self.nframes is None):
            raise ValueError(f"give exactly one of fps and nframes for frame sampling (got fps={self.fps}, "
                             f"nframes={self.nframes})")
        if self.fps is not None and self.fps <= 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        if self.count_rounding not in COUNT_ROUNDINGS:
            raise ValueError(f"count_rounding must be one of {COUNT_ROUNDINGS}, got '{self.count_rounding}'")
        if self.min_pixels > self.max_pixels:
            raise ValueError(f"min_pixels {self.min_pixels} exceeds max_pixels {self.max_pixels}")

    def with_overrides(self, **changes) -> "QwenVLUtilsVideo":
        """A copy with the given fields changed; fields given as None keep their value."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def num_frames(self, total_frames: int, video_fps: float) -> int:
        """`smart_nframes`: how many frames are sampled from a video of `total_frames` frames at `video_fps`."""
        if self.nframes is not None:
            n = _round_by(self.nframes, FRAME_FACTOR)
            n = min(n, total_frames) if self.count_rounding == "round" else n
        else:
            min_frames = _ceil_by(self.min_frames, FRAME_FACTOR)
            max_frames = _floor_by(min(self.max_frames, total_frames), FRAME_FACTOR)
            n_float = total_frames / video_fps * self.fps
            if self.count_rounding == "round":
                n = min(_round_by(min(max(n_float, min_frames), max_frames), FRAME_FACTOR), total_frames)
            else:
                n = _floor_by(min(min(max(n_float, min_frames), max_frames), total_frames), FRAME_FACTOR)
        if not FRAME_FACTOR <= n <= total_frames:
            raise ValueError(
                f"qwen-vl-utils samples {n} frames from a video of {total_frames} frames; it needs between "
                f"{FRAME_FACTOR} and the video length: give longer videos or fewer frames"
            )
        return n

    def frame_indices(self, total_frames: int, video_fps: float) -> list[int]:
        """round(linspace(0, total - 1, n)), qwen-vl-utils' uniform sampling."""
        n = self.num_frames(total_frames, video_fps)
        return torch.linspace(0, total_frames - 1, n).round().long().tolist()

    def frame_size(self, num_frames: int, height: int, width: int) -> tuple[int, int]:
        """(height, width) every sampled frame is resized to."""
        max_pixels: float = self.max_pixels
        if self.total_pixels is not None:
            cap = max(self.total_pixels / num_frames * FRAME_FACTOR, int(self.min_pixels * 1.05))
            max_pixels = min(max_pixels, cap)
        return smart_resize(height, width, self.factor, self.min_pixels, max_pixels)


def preprocess_video(
    video: torch.Tensor, rules: QwenVLUtilsVideo, settings: QwenVideoSettings, video_fps: float
) -> QwenVideoInputs:
    """video[F, 3, H, W] in [0, 1] -> model video inputs: qwen-vl-utils' sampling and resize, then the processor's
    normalisation and patchify (`settings`: patch/merge/temporal sizes, mean, std). Differentiable."""
    if video.dim() != 4 or video.shape[1] != 3:
        raise ValueError(f"expected video[F, 3, H, W], got shape {tuple(video.shape)}")
    if rules.factor != settings.factor:
        raise ValueError(f"qwen-vl-utils resize factor {rules.factor} differs from the model's patch_size * "
                         f"merge_size = {settings.factor}")
    total = int(video.shape[0])
    indices = rules.frame_indices(total, video_fps)
    frames = video[torch.tensor(indices, device=video.device)]
    if frames.dtype != torch.float64:
        frames = frames.to(torch.float32)
    size = rules.frame_size(len(indices), int(frames.shape[-2]), int(frames.shape[-1]))
    frames = normalize_frames(resize_frames(frames, size, settings.interpolation), settings)
    patches, grid = patchify(frames, settings)
    return QwenVideoInputs(patches, torch.tensor([grid], dtype=torch.long), [indices], [float(video_fps)], [total])


def preprocess_videos(
    videos: torch.Tensor | Sequence[torch.Tensor], rules: QwenVLUtilsVideo, settings: QwenVideoSettings,
    video_fps: float,
) -> QwenVideoInputs:
    """videos[B, F, 3, H, W] -> one QwenVideoInputs for the batch (see `preprocess_video`)."""
    return concat_video_inputs([preprocess_video(v, rules, settings, video_fps) for v in videos])


def image_frame_indices(total_frames: int, num_images: int) -> list[int]:
    """int(i * total / n) for i < n: the frames UnifiedReward-2.0's scripts extract as images."""
    if total_frames < num_images:
        raise ValueError(f"cannot take {num_images} frames as images from a video of {total_frames} frames")
    return [int(i * total_frames / num_images) for i in range(num_images)]


def sample_images(
    video: torch.Tensor, num_images: int, image_settings: QwenVideoSettings
) -> tuple[torch.Tensor, torch.Tensor]:
    """video[F, 3, H, W] in [0, 1] -> (pixel_values[N, D], image_grid_thw[num_images, 3]): frames as images.

    `image_settings` describes the image processor (family "qwen2_vl" rules: a per-image pixel budget).
    """
    indices = image_frame_indices(int(video.shape[0]), num_images)
    frames = video[torch.tensor(indices, device=video.device)]
    if frames.dtype != torch.float64:
        frames = frames.to(torch.float32)
    size = resized_size(image_settings, 1, int(frames.shape[-2]), int(frames.shape[-1]))
    frames = normalize_frames(resize_frames(frames, size, image_settings.interpolation), image_settings)
    patches, grids = [], []
    for frame in frames:
        p, grid = patchify(frame[None], image_settings)
        patches.append(p)
        grids.append(grid)
    return torch.cat(patches, dim=0), torch.tensor(grids, dtype=torch.long)
