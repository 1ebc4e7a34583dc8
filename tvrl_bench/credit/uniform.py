"""Uniform credit: every token weighs 1, which recovers GRPO exactly."""

from __future__ import annotations

import torch

from tvrl_bench.credit.base import CreditRouter
from tvrl_bench.registry import register


@register("credit", "uniform")
class UniformRouter(CreditRouter):
    """GRPO: weight 1 on every token; needs no critic gradient."""

    needs_grads = False
    method = "GRPO"

    def __call__(self, grads, video, grid, mask=None):
        tt, hh, ww = grid.grid_from_video(video.shape[:2] + video.shape[3:])
        return torch.ones(video.shape[0], tt, hh, ww, device=video.device)

    def per_check(self, grads, video, grid, mask=None):
        return self(grads, video, grid, mask)[:, None]
