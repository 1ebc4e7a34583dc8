"""The deterministic Euler step, for evaluation and for the non-trained steps of a rollout."""

from __future__ import annotations

import torch

from tvrl_bench.registry import register
from tvrl_bench.samplers.base import Sampler


@register("samplers", "ode")
class OdeSampler(Sampler):
    """Deterministic Euler ODE step x' = x + v dt (zero variance: never trained)."""

    stochastic = False

    def variance(self, sigma: torch.Tensor, sigma_next: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(sigma - sigma_next)
