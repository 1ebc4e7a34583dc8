"""SAGE-GRPO's SDE sampler: the exact integral of Flow-GRPO's diffusion schedule over the step."""

from __future__ import annotations

import torch

from tvrl_bench.registry import register
from tvrl_bench.samplers.base import Sampler


@register("samplers", "sage")
class SageSampler(Sampler):
    """SAGE SDE: Var = eta^2 * (-(s - s') + ln((1 - s') / (1 - min(s, 1 - clamp)))), Flow's g^2 integrated."""

    def __init__(self, eta: float = 0.5, clamp: float = 3e-3):
        if eta < 0:
            raise ValueError(f"samplers.sage.eta must be >= 0, got {eta}")
        if not 0 < clamp < 1:
            raise ValueError(f"samplers.sage.clamp must be in (0, 1), got {clamp}")
        self.eta = eta
        self.clamp = clamp

    def variance(self, sigma: torch.Tensor, sigma_next: torch.Tensor) -> torch.Tensor:
        # integral over u in [s', s] of u / (1 - u) du = ln((1 - s') / (1 - s)) - (s - s'); s is kept below 1.
        s = torch.clamp(sigma, max=1 - self.clamp)
        return self.eta**2 * (-(sigma - sigma_next) + torch.log((1 - sigma_next) / (1 - s)))
