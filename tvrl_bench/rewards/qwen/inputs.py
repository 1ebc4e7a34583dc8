"""`rewards.qwen_inputs`: the settings every Qwen-family critic shares (frame sampling, pixel budget, batching,
weights and placement), bound once in gin instead of once per critic.

A Qwen-family critic (`rewards.qwen_vl`, `rewards.videoalign`, `rewards.videoscore2`, `rewards.unifiedreward2`)
takes one `inputs: QwenInputs | None` parameter; None builds `QwenInputs()` from its gin bindings
(`rewards.qwen_inputs.max_pixels = 50176`); in Python, pass `inputs=QwenInputs(fps=2.0, ...)`. The critics do not
take these fields one by one, so a misspelled binding fails when the config is parsed.

Two critics in one config (a judge's critic and the training critic) read the same unscoped bindings. To give
them different values, scope them: `judge/rewards.qwen_inputs.batch_size = 8` applies only while
`@judge/rewards.qwen_vl()` is built (gin applies a scope to every configurable called inside it).

A value of None means "the critic's own rule": the checkpoint's processor (`rewards.qwen_vl`), the reference's
qwen-vl-utils settings (VideoScore2, UnifiedReward-2) or the checkpoint's `model_config.json` (VideoAlign).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import gin
import torch

from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings

DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32, "float16": torch.float16}
PADDING_SIDES = ("left", "right")


@gin.configurable("qwen_inputs", module="rewards")
@dataclass(frozen=True)
class QwenInputs:
    """How a Qwen-family critic samples and sizes its video input and runs its model (one frozen record; the
    preprocessed tensors themselves are `qwen/video.py`'s QwenVideoInputs).

    frames: sample this many frames per video (exclusive with fps); None: by fps.
    fps: sample at this rate, in frames per second of video time; None with frames None: the critic's own rule.
    video_fps: frame rate of the videos the critic receives (fps sampling and timestamps use it).
    min_pixels, max_pixels: the resize budget (Qwen3.5 / Qwen3-VL processors: over all sampled frames; Qwen2 /
        Qwen2.5-VL and qwen-vl-utils: per frame or per image); None: the critic's own.
    batch_size: pairs per forward pass; None: the critic's default (`rewards.qwen_vl` 4, the reward models 1).
    padding_side: "left" or "right" padding of a batch's token sequences (VideoAlign always pads on the right,
        as its reference's positions require).
    recompute_in_backward: checkpoint each batch (keep only its video; recompute the forward during backward).
    dtype: "bfloat16", "float32" or "float16" weights.
    device: "auto" (cuda if available), "cpu", "cuda", "cuda:1", ...
    attn_implementation: transformers attention backend ("sdpa", "eager", "flash_attention_2").
    """

    frames: int | None = None
    fps: float | None = None
    video_fps: float = 24.0
    min_pixels: int | None = None
    max_pixels: int | None = None
    batch_size: int | None = None
    padding_side: str = "left"
    recompute_in_backward: bool = True
    dtype: str = "bfloat16"
    device: str = "auto"
    attn_implementation: str = "sdpa"

    def __post_init__(self) -> None:
        name = "rewards.qwen_inputs"
        if self.frames is not None and self.fps is not None:
            raise ValueError(f"{name}: set either frames or fps for frame sampling, not both (got frames="
                             f"{self.frames}, fps={self.fps}; set the other to None)")
        if self.frames is not None and self.frames < 1:
            raise ValueError(f"{name}.frames={self.frames} must be at least 1 (or None: sample by fps)")
        if self.fps is not None and self.fps <= 0:
            raise ValueError(f"{name}.fps={self.fps} must be positive (or None: the critic's own rule)")
        if self.video_fps <= 0:
            raise ValueError(f"{name}.video_fps={self.video_fps} must be positive")
        if None not in (self.min_pixels, self.max_pixels) and self.min_pixels > self.max_pixels:
            raise ValueError(f"{name}.min_pixels={self.min_pixels} exceeds max_pixels={self.max_pixels}")
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"{name}.batch_size={self.batch_size} must be at least 1")
        if self.padding_side not in PADDING_SIDES:
            raise ValueError(f"{name}.padding_side='{self.padding_side}' must be 'left' or 'right'")
        if self.dtype not in DTYPES:
            raise ValueError(f"{name}.dtype='{self.dtype}' is not supported; use one of {', '.join(DTYPES)}")

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    def torch_device(self) -> torch.device:
        """'auto' -> cuda when available, else cpu; anything else as torch names it."""
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    def video_settings(self, processor: QwenVideoSettings) -> QwenVideoSettings:
        """The checkpoint processor's settings with these choices applied (frames or fps, pixel budget)."""
        return processor.with_overrides(
            num_frames=self.frames, fps=self.fps, min_pixels=self.min_pixels, max_pixels=self.max_pixels
        )

    def batch(self, default: int) -> int:
        """Pairs per forward pass: `batch_size`, or the critic's default when it is None."""
        return default if self.batch_size is None else self.batch_size


FIELDS = tuple(f.name for f in fields(QwenInputs))


def resolve_inputs(critic: str, inputs: QwenInputs | None) -> QwenInputs:
    """The settings critic `critic` (e.g. "rewards.qwen_vl") runs with: `inputs`, or `QwenInputs()` from gin (in
    the scope the critic is built in) when it is None."""
    base = QwenInputs() if inputs is None else inputs
    if not isinstance(base, QwenInputs):
        raise TypeError(f"{critic}.inputs must be a QwenInputs (e.g. @rewards.qwen_inputs()), got "
                        f"{type(base).__name__}")
    return base
