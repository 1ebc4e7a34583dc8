"""Flow-GRPO's coefficients-preserving sampler (CPS): its own mean and variance."""

from __future__ import annotations

import math

import torch

from tvrl_bench.config.rules import Checks, number
from tvrl_bench.registry import register
from tvrl_bench.samplers.base import Sampler


@register("samplers", "cps")
class CpsSampler(Sampler):
    """CPS: Var = (s' sin(a pi/2))^2, mu = (1 - s') x_hat0 + sqrt(s'^2 - Var) x_hat1 (Flow-GRPO sde_type='cps').

    The log-probability is the full Gaussian density (Flow-GRPO drops its constants and the 1/(2 Var) factor;
    the policy ratio of a Gaussian with fixed variance differs from theirs by that scale).
    """

    CHECKS = Checks(a=number(0, 1, example="0.8"))

    def __init__(self, a: float = 0.8):
        self.a = a

    def variance(self, sigma: torch.Tensor, sigma_next: torch.Tensor) -> torch.Tensor:
        return (sigma_next * math.sin(self.a * math.pi / 2)) ** 2 + torch.zeros_like(sigma)

    def mean(self, x, v, sigma, sigma_next, var):
        x_hat0 = x - sigma * v
        x_hat1 = x + (1 - sigma) * v
        return (1 - sigma_next) * x_hat0 + torch.sqrt(torch.clamp(sigma_next**2 - var, min=0)) * x_hat1
