"""SAGE-GRPO's SDE sampler: the exact integral of Flow-GRPO's diffusion schedule over the step."""

from __future__ import annotations

import torch

from tvrl_bench.config.rules import Checks, number
from tvrl_bench.registry import register
from tvrl_bench.samplers.base import Sampler


@register("samplers", "sage")
class SageSampler(Sampler):
    """SAGE SDE: Var = eta^2 * (-(s - s') + ln((1 - s') / (1 - min(s, 1 - clamp)))), Flow's g^2 integrated."""

    CHECKS = Checks(eta=number(0, example="0.5"), clamp=number(0, 1, low_open=True, high_open=True, example="3e-3"))

    def __init__(self, eta: float = 0.5, clamp: float = 3e-3):
        self.eta = eta
        self.clamp = clamp

    def variance(self, sigma: torch.Tensor, sigma_next: torch.Tensor) -> torch.Tensor:
        # integral over u in [s', s] of u / (1 - u) du = ln((1 - s') / (1 - s)) - (s - s'); s is kept below 1.
        s = torch.clamp(sigma, max=1 - self.clamp)
        return self.eta**2 * (-(sigma - sigma_next) + torch.log((1 - sigma_next) / (1 - s)))
