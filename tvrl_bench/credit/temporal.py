"""Credit along time when a critic looks at only some frames of the video.

A critic that samples frames (Qwen VL critics take 2 frames per second: 4 of 33 frames) sends no gradient to the
frames it skips. Pooling such a map over each latent token's pixel footprint leaves latent frames without any
sampled frame at zero credit (their transitions drop out of the weighted ratio), and, with a causal VAE, favours
latent frame 0 (one pixel frame) over later ones (several pixel frames, at most one sampled).

`fill_skipped_frames` gives every skipped frame the linear interpolation in time of the maps of the nearest sampled
frames before and after it (the nearest sampled frame's map beyond the first / last one), so every pixel frame
carries credit and a latent frame's credit is a time average of the critic's evidence around it.
"""

from __future__ import annotations

from typing import Sequence

import torch


def seen_frames(maps: torch.Tensor) -> list[int]:
    """Frame indices that received any gradient: maps[..., F, H, W] -> sorted indices f with some map value != 0."""
    f = maps.shape[-3]
    per_frame = maps.detach().abs().movedim(-3, 0).reshape(f, -1).sum(dim=1)
    return [int(i) for i in torch.nonzero(per_frame > 0).flatten()]


def interpolation_matrix(sampled: Sequence[int], num_frames: int) -> torch.Tensor:
    """M[F, F]: row f holds the weights of frame f's value on the sampled frames (linear in time, clamped ends).

    Sampled frames keep their own value (row f = e_f); a skipped frame between sampled frames a < f < b gets
    (b - f) / (b - a) of a's value and (f - a) / (b - a) of b's; before the first / after the last sampled frame it
    copies that frame. Columns of skipped frames are zero.
    """
    keys = sorted({int(s) for s in sampled})
    if not keys or keys[0] < 0 or keys[-1] >= num_frames:
        raise ValueError(f"sampled frames {list(sampled)} must be non-empty indices into {num_frames} frames")
    m = torch.zeros(num_frames, num_frames, dtype=torch.float64)
    for f in range(num_frames):
        if f <= keys[0]:
            m[f, keys[0]] = 1.0
        elif f >= keys[-1]:
            m[f, keys[-1]] = 1.0
        else:
            right = next(k for k in keys if k >= f)
            left = max(k for k in keys if k <= f)
            if left == right:
                m[f, f] = 1.0
            else:
                m[f, left] = (right - f) / (right - left)
                m[f, right] = (f - left) / (right - left)
    return m


def fill_skipped_frames(maps: torch.Tensor, sampled: Sequence[int] | None = None) -> torch.Tensor:
    """maps[..., F, H, W] with every frame outside `sampled` filled by linear interpolation in time.

    sampled: the frames the critic looked at; None: the frames with any non-zero value (`seen_frames`). When every
    frame was sampled, or none has a value, the maps come back unchanged.
    """
    f = maps.shape[-3]
    keys = seen_frames(maps) if sampled is None else sorted({int(s) for s in sampled})
    if not keys or len(keys) == f:
        return maps
    m = interpolation_matrix(keys, f).to(maps.device, maps.dtype)
    return torch.einsum("gf,...fhw->...ghw", m, maps)
