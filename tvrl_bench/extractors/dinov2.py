"""DINOv2 saliency for the feature-map router (control): where a self-supervised ViT looks, reward-agnostic.

Each frame is resized (bicubic, antialiased, no crop) so its short side is the checkpoint's crop size (224),
both sides rounded to multiples of the patch size (14), normalised with the checkpoint's mean/std, and run
through the transformers `Dinov2Model` (or `Dinov2WithRegistersModel`). The per-patch saliency is upsampled
(bilinear) back to the video's pixels. Two saliency definitions (`mode`):

- "cls_attention" (default): the last layer's attention from the CLS token to each patch, averaged over heads:
  DINO's classic object saliency. Needs eager attention (loaded with attn_implementation="eager"). Large DINOv2
  models without registers put a few high-attention artifact patches on background; the with-registers
  checkpoints (facebook/dinov2-with-registers-*) remove them and are recommended.
- "feature_norm": the L2 norm of each patch's last-layer feature after subtracting the frame's mean patch
  feature: how distinct a patch is from the frame's average content.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
import torch.nn.functional as F

from tvrl_bench.config.rules import Checks, integer, one_of
from tvrl_bench.registry import register

MODES = ("cls_attention", "feature_norm")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _size_value(size, key: str) -> int | None:
    """size[key] for a processor size given as a dict or as transformers' SizeDict."""
    if size is None:
        return None
    value = size.get(key) if isinstance(size, dict) else getattr(size, key, None)
    return int(value) if value is not None else None


def model_input_size(height: int, width: int, short_side: int, patch: int) -> tuple[int, int]:
    """(h, w) with the short side scaled to `short_side`, the aspect ratio kept, both rounded to multiples of patch."""
    scale = short_side / min(height, width)
    h = max(patch, round(height * scale / patch) * patch)
    w = max(patch, round(width * scale / patch) * patch)
    return h, w


@register("extractors", "dinov2")
class Dinov2Saliency:
    """DINOv2 saliency: last-layer CLS attention (or centred patch-feature norm), upsampled to pixels.

    path: local transformers DINOv2 checkpoint folder (config.json, weights, preprocessor_config.json).
    mode: "cls_attention" or "feature_norm" (module docstring).
    short_side: model input short side in pixels (None: the processor's crop size, 224 for DINOv2).
    frames_per_batch: frames per forward pass.
    dtype: "float32", "bfloat16" or "float16".
    device: where the model runs (None: the device of the video it is called on).

    __call__: video[B, F, 3, H, W] in [0, 1] -> saliency[B, F, H, W] >= 0 (float32, no gradient).
    """

    CHECKS = Checks(mode=one_of(*MODES), dtype=one_of(*sorted(DTYPES)), frames_per_batch=integer(1, example="32"))

    def __init__(
        self,
        path: str,
        mode: str = "cls_attention",
        short_side: int | None = None,
        frames_per_batch: int = 32,
        dtype: str = "float32",
        device: str | None = None,
    ):
        from transformers import AutoImageProcessor, AutoModel

        folder = Path(path).expanduser()
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(
                f"extractors.dinov2.path='{path}' holds no config.json: set it to a local DINOv2 checkpoint folder "
                "(e.g. a copy of facebook/dinov2-with-registers-base or facebook/dinov2-base)"
            )
        if not (folder / "preprocessor_config.json").is_file():
            raise FileNotFoundError(
                f"extractors.dinov2.path='{path}' has no preprocessor_config.json (the image mean/std and size); "
                "copy it from the same checkpoint"
            )
        attn = "eager" if mode == "cls_attention" else "sdpa"
        self.model = AutoModel.from_pretrained(str(folder), attn_implementation=attn, dtype=DTYPES[dtype]).eval()
        if self.model.config.model_type not in ("dinov2", "dinov2_with_registers"):
            raise ValueError(
                f"extractors.dinov2.path='{path}' is a '{self.model.config.model_type}' model, not DINOv2"
            )
        self.model.requires_grad_(False)
        processor = AutoImageProcessor.from_pretrained(str(folder))
        self.mean = torch.tensor(processor.image_mean, dtype=torch.float32).reshape(1, 3, 1, 1)
        self.std = torch.tensor(processor.image_std, dtype=torch.float32).reshape(1, 3, 1, 1)
        crop = _size_value(getattr(processor, "crop_size", None), "height")
        resize = _size_value(getattr(processor, "size", None), "shortest_edge")
        self.short_side = short_side or crop or resize or 224
        patch = self.model.config.patch_size
        self.patch = int(patch[0] if isinstance(patch, (tuple, list)) else patch)
        self.prefix_tokens = 1 + int(getattr(self.model.config, "num_register_tokens", 0))
        self.mode = mode
        self.frames_per_batch = frames_per_batch
        self.device = device

    @torch.no_grad()
    def __call__(self, video: torch.Tensor) -> torch.Tensor:
        if video.ndim != 5 or video.shape[2] != 3:
            raise ValueError(f"DINOv2 saliency expects video[B, F, 3, H, W], got {tuple(video.shape)}")
        b, f, _, height, width = video.shape
        device = torch.device(self.device) if self.device is not None else video.device
        if next(self.model.parameters()).device != device:
            self.model.to(device)
        h, w = model_input_size(height, width, self.short_side, self.patch)
        frames = video.reshape(b * f, 3, height, width)
        maps = [self.patch_saliency(chunk.to(device), (h, w)) for chunk in frames.split(self.frames_per_batch)]
        patch_maps = torch.cat(maps)  # [B*F, h/patch, w/patch]
        pixels = F.interpolate(patch_maps[:, None], size=(height, width), mode="bilinear", align_corners=False)
        return pixels.clamp_min(0).reshape(b, f, height, width).to(video.device)

    @torch.no_grad()
    def patch_saliency(self, frames: torch.Tensor, size: tuple[int, int] | None = None) -> torch.Tensor:
        """Saliency per patch [N, h/patch, w/patch] (float32) for frames[N, 3, H, W] in [0, 1] resized to size=(h, w)."""
        h, w = size or model_input_size(frames.shape[-2], frames.shape[-1], self.short_side, self.patch)
        x = F.interpolate(frames.to(torch.float32), size=(h, w), mode="bicubic", align_corners=False, antialias=True)
        x = (x.clamp(0, 1) - self.mean.to(x.device)) / self.std.to(x.device)
        dtype = next(self.model.parameters()).dtype
        out = self.model(pixel_values=x.to(dtype), output_attentions=self.mode == "cls_attention")
        grid = (h // self.patch, w // self.patch)
        if self.mode == "cls_attention":
            attn = out.attentions[-1].to(torch.float32)  # [N, heads, S, S]
            sal = attn[:, :, 0, self.prefix_tokens :].mean(dim=1)
        else:
            feats = out.last_hidden_state[:, self.prefix_tokens :].to(torch.float32)
            sal = (feats - feats.mean(dim=1, keepdim=True)).norm(dim=-1)
        if sal.shape[1] != math.prod(grid):
            raise RuntimeError(f"DINOv2 returned {sal.shape[1]} patch tokens for a {grid} grid")
        return sal.reshape(-1, *grid)
