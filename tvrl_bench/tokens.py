"""How a generator's tokens map to latent elements and to video pixels.

A policy tokenises its latent x[B, C, T, H, W] into patches of `latent_patch` = (pt, ph, pw) latent positions
(all C channels); token n of the flattened grid [T/pt, H/ph, W/pw] covers `pixel_patch` = (frames, rows, cols)
pixels of the decoded video. A causal video VAE (HunyuanVideo-1.5) encodes the first frame alone, so the first
latent frame covers one pixel frame and every later one covers `frames` pixel frames: `causal_first_frame`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class TokenGrid:
    """Token footprint in latent positions and in pixels.

    latent_patch: (pt, ph, pw) latent positions per token (the transformer's patch sizes).
    pixel_patch: (frames, rows, cols) pixels per token of the decoded video.
    causal_first_frame: the first token frame covers pixel frame 0 only (causal VAE: F = frames*(T'-1)+1).
    """

    latent_patch: tuple[int, int, int]
    pixel_patch: tuple[int, int, int]
    causal_first_frame: bool = False

    def grid_from_latent(self, latent_shape: tuple[int, ...]) -> tuple[int, int, int]:
        """(T', H', W') token grid of a latent [..., T, H, W]."""
        t, h, w = latent_shape[-3:]
        pt, ph, pw = self.latent_patch
        if t % pt or h % ph or w % pw:
            raise ValueError(f"latent {tuple(latent_shape[-3:])} is not divisible by the token patch {self.latent_patch}")
        return t // pt, h // ph, w // pw

    def grid_from_video(self, video_shape: tuple[int, ...]) -> tuple[int, int, int]:
        """(T', H', W') token grid of a video [..., F, H, W] (the channel axis, if any, must not be last 3)."""
        f, h, w = video_shape[-3:]
        ft, fh, fw = self.pixel_patch
        if h % fh or w % fw:
            raise ValueError(f"video {h}x{w} is not divisible by the token's pixel footprint {fh}x{fw}")
        if self.causal_first_frame:
            if (f - 1) % ft:
                raise ValueError(f"a causal grid needs {ft}*k+1 frames, got {f}")
            return (f - 1) // ft + 1, h // fh, w // fw
        if f % ft:
            raise ValueError(f"{f} frames are not divisible by the token's {ft} frames")
        return f // ft, h // fh, w // fw

    @property
    def tokens_per_pixel_frame(self) -> int:
        return self.pixel_patch[0]


def latent_to_tokens(values: torch.Tensor, grid: TokenGrid) -> torch.Tensor:
    """Average per-element values over each token's latent patch and channels.

    values: [B, C, T, H, W] -> [B, N] with N = T' * H' * W' in (t, h, w) row-major order.
    """
    b, c, t, h, w = values.shape
    pt, ph, pw = grid.latent_patch
    tt, hh, ww = grid.grid_from_latent(values.shape)
    patched = values.reshape(b, c, tt, pt, hh, ph, ww, pw)
    return patched.mean(dim=(1, 3, 5, 7)).reshape(b, tt * hh * ww)


def pixels_to_tokens(values: torch.Tensor, grid: TokenGrid) -> torch.Tensor:
    """Average pixel values over each token's pixel footprint.

    values: [..., F, H, W] -> [..., T', H', W']. With a causal grid, token frame 0 averages pixel frame 0 and
    token frame j >= 1 averages pixel frames frames*(j-1)+1 .. frames*j.
    """
    *lead, f, h, w = values.shape
    ft, fh, fw = grid.pixel_patch
    tt, hh, ww = grid.grid_from_video(values.shape)
    if grid.causal_first_frame:
        first = values[..., :1, :, :]
        rest = values[..., 1:, :, :]
        pooled_first = first.reshape(*lead, 1, 1, hh, fh, ww, fw).mean(dim=(-5, -3, -1))
        pooled_rest = rest.reshape(*lead, tt - 1, ft, hh, fh, ww, fw).mean(dim=(-5, -3, -1))
        return torch.cat([pooled_first, pooled_rest], dim=-3)
    return values.reshape(*lead, tt, ft, hh, fh, ww, fw).mean(dim=(-5, -3, -1))
