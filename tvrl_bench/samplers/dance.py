"""DanceGRPO's SDE sampler: Var = eta^2 |dt|."""

from __future__ import annotations

import torch

from tvrl_bench.registry import register
from tvrl_bench.samplers.base import Sampler


@register("samplers", "dance")
class DanceSampler(Sampler):
    """DanceGRPO SDE: variance eta^2 * |dt| with the shared score-corrected drift."""

    def __init__(self, eta: float = 0.3):
        if eta < 0:
            raise ValueError(f"samplers.dance.eta must be >= 0, got {eta}")
        self.eta = eta

    def variance(self, sigma: torch.Tensor, sigma_next: torch.Tensor) -> torch.Tensor:
        return self.eta**2 * (sigma - sigma_next)
