"""Gradient maps on the Qwen critic's own input grid (the official TVRL credit source).

The video processor packs each video into patches[T * H * W, C * tps * p * p] ordered (t, h-block, w-block,
h-in-block, w-in-block) with merge_size x merge_size blocks (qwen_video.patchify). A patch's credit is the sum
of |d score / d value| over its values; undoing the block packing lays the credits out as [T, H, W] in patch rows
and columns, T = sampled frames / temporal_patch_size.
"""

from __future__ import annotations

import torch


def patch_credit(grad: torch.Tensor, grid_thw: torch.Tensor, merge: int) -> list[torch.Tensor]:
    """grad[N, D] of the packed patches of V videos with grid_thw[V, 3] -> V maps [T, H, W] of sum |grad| per patch."""
    per_patch = grad.detach().abs().to(torch.float32).sum(dim=-1)
    maps, start = [], 0
    for t, h, w in grid_thw.tolist():
        if h % merge or w % merge:
            raise ValueError(f"a Qwen video grid {(t, h, w)} is not divisible by merge_size={merge}")
        block = per_patch[start : start + t * h * w]
        start += t * h * w
        maps.append(block.reshape(t, h // merge, w // merge, merge, merge).permute(0, 1, 3, 2, 4).reshape(t, h, w))
    if start != per_patch.shape[0]:
        raise ValueError(f"{per_patch.shape[0]} patch gradients for grids holding {start} patches")
    return maps
