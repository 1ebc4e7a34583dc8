"""DanceGRPO's SDE sampler: Var = eta^2 |dt|."""

from __future__ import annotations

import torch

from tvrl_bench.config.rules import Checks, number
from tvrl_bench.registry import register
from tvrl_bench.samplers.base import Sampler


@register("samplers", "dance")
class DanceSampler(Sampler):
    """DanceGRPO SDE: variance eta^2 * |dt| with the shared score-corrected drift."""

    CHECKS = Checks(eta=number(0, example="0.3"))

    def __init__(self, eta: float = 0.3):
        self.eta = eta

    def variance(self, sigma: torch.Tensor, sigma_next: torch.Tensor) -> torch.Tensor:
        return self.eta**2 * (sigma - sigma_next)
