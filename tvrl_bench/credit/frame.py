"""Frame credit: gradient credit summed per latent frame and spread evenly over that frame's tokens."""

from __future__ import annotations

import torch

from tvrl_bench.credit.base import GradientRouter
from tvrl_bench.registry import register


@register("credit", "frame")
class FrameRouter(GradientRouter):
    """Critic-gradient credit per latent frame, broadcast over the frame's tokens (temporal credit only)."""

    def shape_maps(self, maps: torch.Tensor) -> torch.Tensor:
        per_frame = maps.sum(dim=(-2, -1), keepdim=True)
        return per_frame.expand_as(maps).contiguous()
