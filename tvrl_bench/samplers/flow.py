"""Flow-GRPO's SDE sampler: Var = a^2 s / (1 - s) |dt|."""

from __future__ import annotations

import torch

from tvrl_bench.config.rules import Checks, number
from tvrl_bench.registry import register
from tvrl_bench.samplers.base import Sampler


@register("samplers", "flow")
class FlowSampler(Sampler):
    """Flow-GRPO SDE: variance a^2 * s/(1-s) * |dt| (at s = 1 the denominator is 1 - s')."""

    CHECKS = Checks(a=number(0, example="0.7"))

    def __init__(self, a: float = 0.7):
        self.a = a

    def variance(self, sigma: torch.Tensor, sigma_next: torch.Tensor) -> torch.Tensor:
        # At s = 1, s / (1 - s) is infinite; the reference uses the next level (sigmas[1]) in the denominator.
        denominator = 1 - torch.where(sigma == 1, sigma_next, sigma)
        return self.a**2 * sigma / denominator * (sigma - sigma_next)
