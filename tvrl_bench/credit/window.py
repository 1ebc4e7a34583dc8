"""Window credit: the gradient map averaged over a k x k spatial window of tokens (docs/method.md default k = 3)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tvrl_bench.config.rules import Checks, odd_integer
from tvrl_bench.credit.base import GradientRouter
from tvrl_bench.registry import register


def window_average(maps: torch.Tensor, k: int) -> torch.Tensor:
    """Average each token's k x k spatial neighbourhood within its frame; maps [..., T', H', W'], same shape.

    Windows are cut at the border (the average is over the tokens that exist), so a uniform map stays uniform.
    """
    if k < 1 or k % 2 == 0:
        raise ValueError(f"window size must be an odd integer >= 1, got {k}")
    if k == 1:
        return maps
    *lead, t, h, w = maps.shape
    flat = maps.reshape(-1, 1, h, w)
    pooled = F.avg_pool2d(flat, kernel_size=k, stride=1, padding=k // 2, count_include_pad=False)
    return pooled.reshape(*lead, t, h, w)


@register("credit", "window")
class WindowRouter(GradientRouter):
    """Critic-gradient credit averaged over a k x k token window (k = 1 unsmoothed, 3 default, 7)."""

    CHECKS = Checks(k=odd_integer("3"))

    def __init__(self, k: int = 3, combine: str = "mean"):
        super().__init__(combine)
        self.k = k

    def shape_maps(self, maps: torch.Tensor) -> torch.Tensor:
        return window_average(maps, self.k)
