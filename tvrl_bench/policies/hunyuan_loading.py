"""Loading the HunyuanVideo-1.5 policy's pipeline parts from a local diffusers-format folder.

One job: read the folder that `HunyuanVideo15Pipeline.save_pretrained` writes (`model_index.json`, `transformer/`,
`vae/`, `text_encoder/`, `tokenizer/`, `text_encoder_2/`, `tokenizer_2/`, `scheduler/`, `guider/`) for
hunyuan_video15.py. The component configs are checked against the video size before the large weights load
(`pipeline_folder`, `read_sizes`, which also gives the latent sizes and `hunyuan_token_grid`); `load_pipeline` then
loads the transformer, VAE, text encoders, tokenizers and scheduler config, frozen and in eval mode.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from tvrl_bench.tokens import TokenGrid

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


def hunyuan_token_grid(
    patch_size_t: int, patch_size: int, temporal_compression: int, spatial_compression: int
) -> TokenGrid:
    """The token grid of a HunyuanVideo-1.5 transformer over its causal VAE.

    A token is one transformer patch of (patch_size_t, patch_size, patch_size) latent positions; it covers
    (temporal_compression * patch_size_t, spatial_compression * patch_size, ...) pixels, and the first latent
    frame covers pixel frame 0 alone (causal VAE). HunyuanVideo-1.5: latent (1, 1, 1) -> pixels (4, 16, 16).
    """
    if patch_size_t != 1:
        raise ValueError(
            f"transformer patch_size_t={patch_size_t}: the causal VAE's first latent frame covers one pixel frame, "
            "so a token grid over several latent frames is not defined; HunyuanVideo-1.5 uses patch_size_t=1"
        )
    return TokenGrid(
        latent_patch=(patch_size_t, patch_size, patch_size),
        pixel_patch=(
            temporal_compression * patch_size_t,
            spatial_compression * patch_size,
            spatial_compression * patch_size,
        ),
        causal_first_frame=True,
    )


def pipeline_folder(path: str) -> Path:
    """The folder at `path` (~ expanded), with a clear error when it is not a diffusers pipeline folder."""
    folder = Path(path).expanduser()
    if not (folder / "model_index.json").is_file():
        raise FileNotFoundError(
            f"policies.hunyuan_video15.path='{path}' is not a diffusers pipeline folder (no model_index.json). "
            "Set it to the diffusers-format HunyuanVideo-1.5 T2V checkpoint, e.g. a local copy of "
            "hunyuanvideo-community/HunyuanVideo-1.5-480p_t2v."
        )
    return folder


def read_config(folder: Path, sub: str) -> dict:
    """The config.json of a pipeline component, with a clear error when it is missing."""
    path = folder / sub / "config.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"policies.hunyuan_video15.path='{folder}' has no {sub}/config.json: not a complete diffusers "
            "HunyuanVideo-1.5 folder"
        )
    return json.loads(path.read_text())


@dataclass(frozen=True)
class HunyuanSizes:
    """What the VAE and transformer configs imply: compression ratios, latent channels and the token grid."""

    temporal_compression: int
    spatial_compression: int
    latent_channels: int
    token_grid: TokenGrid


def read_sizes(folder: Path, frames: int, height: int, width: int) -> HunyuanSizes:
    """The latent sizes of the folder's VAE and transformer, checked against a video of frames x height x width
    (see `check_size`); warns (attributed to the policy's caller) when the transformer is not text-to-video."""
    transformer_config, vae_config = read_config(folder, "transformer"), read_config(folder, "vae")
    temporal_compression = int(vae_config.get("temporal_compression_ratio", 4))
    spatial_compression = int(vae_config.get("spatial_compression_ratio", 16))
    latent_channels = int(vae_config.get("latent_channels", 32))
    check_size(str(folder), transformer_config, latent_channels, temporal_compression, spatial_compression,
               frames, height, width)
    token_grid = hunyuan_token_grid(
        int(transformer_config.get("patch_size_t", 1)),
        int(transformer_config.get("patch_size", 1)),
        temporal_compression,
        spatial_compression,
    )
    if transformer_config.get("task_type", "t2v") != "t2v":
        warnings.warn(
            f"{folder}: transformer task_type is '{transformer_config['task_type']}'; this policy generates "
            "text-to-video (zero image conditioning). Use the T2V checkpoint.",
            stacklevel=3,  # the caller of the policy's constructor
        )
    return HunyuanSizes(temporal_compression, spatial_compression, latent_channels, token_grid)


def check_size(path: str, transformer_config: dict, latent_channels: int, rt: int, rs: int, frames: int, height: int, width: int) -> None:
    """Errors naming the setting when the transformer's input channels do not fit the VAE (t2v: 2C + 1) or the
    video size does not fit the VAE's compression (rt temporal, rs spatial) and the transformer's patch."""
    p = int(transformer_config.get("patch_size", 1))
    in_channels = int(transformer_config.get("in_channels", 65))
    if in_channels != 2 * latent_channels + 1:
        raise ValueError(
            f"{path}: transformer in_channels={in_channels} but the t2v input is "
            f"[latent, condition latents, mask] = 2 x {latent_channels} + 1 channels for this VAE"
        )
    if frames < 1 or (frames - 1) % rt:
        raise ValueError(
            f"policies.hunyuan_video15.frames={frames}: the causal VAE needs {rt}k + 1 frames "
            f"(e.g. {rt * max((frames - 1) // rt, 1) + 1})"
        )
    for name, size in (("height", height), ("width", width)):
        if size < rs * p or size % (rs * p):
            raise ValueError(
                f"policies.hunyuan_video15.{name}={size} must be a positive multiple of {rs * p} "
                f"(VAE compression {rs} x transformer patch {p})"
            )


def load_pipeline(folder: Path, dtype: torch.dtype, gradient_checkpointing: bool, vae_slicing: bool, vae_tiling: bool):
    """`HunyuanVideo15Pipeline` from `folder` in `dtype`, its transformer, VAE and text encoders frozen and in eval
    mode, with gradient checkpointing (transformer) and slicing / tiling (VAE) switched on as asked."""
    from diffusers import HunyuanVideo15Pipeline

    try:
        pipe = HunyuanVideo15Pipeline.from_pretrained(str(folder), dtype=dtype)
    except (OSError, ValueError, TypeError) as err:
        raise type(err)(
            f"policies.hunyuan_video15.path='{folder}': could not load HunyuanVideo15Pipeline ({err}). The folder "
            "needs model_index.json and the transformer, vae, text_encoder, tokenizer, text_encoder_2, "
            "tokenizer_2, scheduler and guider subfolders written by diffusers' save_pretrained."
        ) from err
    for module in (pipe.transformer, pipe.vae, pipe.text_encoder, pipe.text_encoder_2):
        module.requires_grad_(False)
        module.eval()
    if gradient_checkpointing:
        pipe.transformer.enable_gradient_checkpointing()
    if vae_slicing:
        pipe.vae.enable_slicing()
    if vae_tiling:
        pipe.vae.enable_tiling()
    return pipe
