"""The Qwen video processor settings that decide `pixel_values_videos`, read from a checkpoint's processor.

`QwenVideoSettings` is one frozen record per critic: the family's sampling and resize rule ("qwen3_vl" for
`Qwen3VLVideoProcessor`: Qwen3.5, Qwen3-VL; "qwen2_vl" for `Qwen2VLVideoProcessor`: Qwen2-VL, Qwen2.5-VL), patch,
merge and temporal patch sizes, pixel budget, frame sampling, mean / std and interpolation.
`QwenVideoSettings.from_processor` reads them from a video processor, `image_settings_from_processor` from an
image processor (frames fed as images), and `with_overrides` applies a critic's choices (`rewards.qwen_inputs`).
The preprocessing that uses them is `qwen/video.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

FAMILIES = ("qwen3_vl", "qwen2_vl")
# The processors' class names per family (checked by name, so importing this module stays light).
_FAMILY_OF_PROCESSOR = {"Qwen3VLVideoProcessor": "qwen3_vl", "Qwen2VLVideoProcessor": "qwen2_vl"}
# PIL resampling codes the processors store -> F.interpolate modes (torchvision's mapping for tensors).
_INTERPOLATION_OF_RESAMPLE = {2: "bilinear", 3: "bicubic"}


@dataclass(frozen=True)
class QwenVideoSettings:
    """The video processor settings that decide `pixel_values_videos` (one frozen record per critic)."""

    family: str
    patch_size: int = 16
    temporal_patch_size: int = 2
    merge_size: int = 2
    min_pixels: int = 128 * 32 * 32
    max_pixels: int = 768 * 32 * 32
    min_frames: int = 4
    max_frames: int = 768
    num_frames: int | None = None
    fps: float | None = 2.0
    do_sample_frames: bool = True
    do_resize: bool = True
    do_normalize: bool = True
    image_mean: tuple[float, ...] = (0.5, 0.5, 0.5)
    image_std: tuple[float, ...] = (0.5, 0.5, 0.5)
    interpolation: str = "bicubic"
    cap_pixels_per_frame: bool = False
    max_video_tokens: int = 768

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"QwenVideoSettings.family must be one of {FAMILIES}, got '{self.family}'")
        if self.interpolation not in ("bicubic", "bilinear"):
            raise ValueError(
                f"QwenVideoSettings.interpolation must be 'bicubic' or 'bilinear', got '{self.interpolation}'"
            )
        if self.num_frames is not None and self.num_frames < 1:
            raise ValueError(f"num_frames must be positive, got {self.num_frames}")
        if self.fps is not None and self.fps <= 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        if self.min_pixels > self.max_pixels:
            raise ValueError(f"min_pixels {self.min_pixels} exceeds max_pixels {self.max_pixels}")

    @property
    def factor(self) -> int:
        """Both resized sides are multiples of this: patch_size * merge_size."""
        return self.patch_size * self.merge_size

    @classmethod
    def from_processor(cls, video_processor: Any) -> "QwenVideoSettings":
        """The settings of a `Qwen3VLVideoProcessor` / `Qwen2VLVideoProcessor` (e.g. `processor.video_processor`)."""
        family = None
        for klass in type(video_processor).__mro__:
            family = _FAMILY_OF_PROCESSOR.get(klass.__name__)
            if family:
                break
        if family is None:
            raise TypeError(
                f"unsupported video processor {type(video_processor).__name__}: expected a subclass of "
                f"{', '.join(_FAMILY_OF_PROCESSOR)}"
            )
        vp = video_processor
        size = dict(vp.size)
        resample = getattr(vp, "resample", 3)
        resample = int(getattr(resample, "value", resample))
        if resample not in _INTERPOLATION_OF_RESAMPLE:
            raise ValueError(f"unsupported resample {resample} in the video processor (bilinear=2 and bicubic=3 are)")
        return cls(
            family=family,
            patch_size=int(vp.patch_size),
            temporal_patch_size=int(vp.temporal_patch_size),
            merge_size=int(vp.merge_size),
            min_pixels=int(size["shortest_edge"]),
            max_pixels=int(size["longest_edge"]),
            min_frames=int(vp.min_frames),
            max_frames=int(vp.max_frames),
            num_frames=getattr(vp, "num_frames", None),
            fps=getattr(vp, "fps", None),
            do_sample_frames=bool(vp.do_sample_frames),
            do_resize=bool(vp.do_resize),
            do_normalize=bool(vp.do_normalize),
            image_mean=tuple(float(m) for m in vp.image_mean),
            image_std=tuple(float(s) for s in vp.image_std),
            interpolation=_INTERPOLATION_OF_RESAMPLE[resample],
            cap_pixels_per_frame=bool(getattr(vp, "cap_pixels_per_frame", None) or False),
            max_video_tokens=int(getattr(vp, "max_video_tokens", 768)),
        )

    def with_overrides(
        self,
        num_frames: int | None = None,
        fps: float | None = None,
        min_pixels: int | None = None,
        max_pixels: int | None = None,
    ) -> "QwenVideoSettings":
        """A copy with a critic's choices: a fixed frame count or a sampling fps (exclusive), a pixel budget.

        Giving `num_frames` or `fps` turns frame sampling on (Qwen2-VL processors ship with it off).
        """
        if num_frames is not None and fps is not None:
            raise ValueError("give either num_frames or fps for frame sampling, not both")
        changes: dict[str, Any] = {}
        if num_frames is not None:
            changes.update(num_frames=int(num_frames), fps=None, do_sample_frames=True)
        if fps is not None:
            changes.update(fps=float(fps), num_frames=None, do_sample_frames=True)
        if min_pixels is not None:
            changes["min_pixels"] = int(min_pixels)
        if max_pixels is not None:
            changes["max_pixels"] = int(max_pixels)
        return replace(self, **changes)

    def processor_kwargs(self) -> dict[str, Any]:
        """Keyword arguments that make the real video processor (or processor) behave exactly like these settings."""
        return {
            "do_sample_frames": self.do_sample_frames,
            "num_frames": self.num_frames,
            "fps": self.fps,
            "size": {"shortest_edge": self.min_pixels, "longest_edge": self.max_pixels},
            "cap_pixels_per_frame": self.cap_pixels_per_frame,
        }


def image_settings_from_processor(image_processor: Any) -> QwenVideoSettings:
    """The image processor's patchify / resize / normalise settings, in the same record (frames fed as images)."""
    size = dict(image_processor.size)
    min_pixels = size.get("shortest_edge") or getattr(image_processor, "min_pixels", None)
    max_pixels = size.get("longest_edge") or getattr(image_processor, "max_pixels", None)
    resample = getattr(image_processor, "resample", 3)
    resample = int(getattr(resample, "value", resample))
    return QwenVideoSettings(
        family="qwen2_vl",  # images: a per-image pixel budget, one frame repeated to the temporal patch size
        patch_size=int(image_processor.patch_size),
        temporal_patch_size=int(image_processor.temporal_patch_size),
        merge_size=int(image_processor.merge_size),
        min_pixels=int(min_pixels),
        max_pixels=int(max_pixels),
        do_sample_frames=False,
        image_mean=tuple(float(m) for m in image_processor.image_mean),
        image_std=tuple(float(s) for s in image_processor.image_std),
        interpolation=_INTERPOLATION_OF_RESAMPLE.get(resample, "bicubic"),
    )
