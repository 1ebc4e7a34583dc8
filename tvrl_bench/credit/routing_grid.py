"""The official TVRL credit layout: critic-patch maps -> a fixed routing grid -> zero-padded pooling -> latent grid.

Input maps g[B, K, Tc, Hc, Wc] are |d score_k / d (the critic's input patches)| summed over each patch's values,
laid out on the critic's own grid (training/scoring.py, space "critic"). Per rollout and check:

    m_t   = g_t / sum(g_t)                                   each critic time step t carries mass 1
    r     = trilinear(m, (Tc, bins, bins)); r_t /= sum(r_t)  the routing grid, bins x bins per time step
    r     = permute(r)                                       shuffled control only: a fresh permutation
    s_t   = avg_pool_k(r_t) with zero padding; s_t /= sum    borders are averaged with zeros (count_include_pad)
    c     = trilinear(s, (T', H', W')); c /= mean(c)          every latent frame gets credit; mean weight 1

Because the pooling pads with zeros, the official "uniform" control is not flat: with k = 3 on a 16 x 16 grid an
interior cell weighs 1.089, an edge cell 0.726 and a corner 0.484 (before the final resampling).
Zero maps (no gradient) become uniform before pooling. Trilinear resampling uses align_corners=False.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tvrl_bench.config.rules import Checks, integer, odd_integer, one_of
from tvrl_bench.credit.base import COMBINE_MODES, CreditRouter, combine, normalise
from tvrl_bench.registry import register
from tvrl_bench.tokens import TokenGrid

CONTROLS = ("none", "uniform", "shuffled")


def per_step_sum_one(maps: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """Scale each time step of maps[..., T, H, W] to sum 1; an all-zero step becomes uniform."""
    total = maps.sum(dim=(-2, -1), keepdim=True)
    flat = torch.full_like(maps, 1.0 / (maps.shape[-2] * maps.shape[-1]))
    return torch.where(total > eps, maps / total.clamp_min(eps), flat)


def resample(maps: torch.Tensor, size: tuple[int, int, int]) -> torch.Tensor:
    """Trilinear resampling of maps[..., T, H, W] to [..., *size] (align_corners=False)."""
    *lead, t, h, w = maps.shape
    flat = maps.reshape(-1, 1, t, h, w)
    out = F.interpolate(flat, size=tuple(size), mode="trilinear", align_corners=False)
    return out.reshape(*lead, *size)


def zero_padded_pool(maps: torch.Tensor, k: int) -> torch.Tensor:
    """k x k average of each time step of maps[..., T, H, W], padding with zeros that count in the average."""
    if k < 1 or k % 2 == 0:
        raise ValueError(f"pooling window must be an odd integer >= 1, got {k}")
    if k == 1:
        return maps
    *lead, t, h, w = maps.shape
    pooled = F.avg_pool2d(maps.reshape(-1, 1, h, w), kernel_size=k, stride=1, padding=k // 2, count_include_pad=True)
    return pooled.reshape(*lead, t, h, w)


def shuffle_maps(maps: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """maps[B, K, T, H, W] with each (rollout, check) map's values permuted by its own fresh permutation."""
    b, k = maps.shape[:2]
    flat = maps.reshape(b * k, -1)
    order = torch.stack([torch.randperm(flat.shape[1], generator=generator) for _ in range(b * k)])
    return torch.gather(flat, 1, order.to(flat.device)).reshape(maps.shape)


def route(
    maps: torch.Tensor,
    latent: tuple[int, int, int],
    bins: int = 16,
    k: int = 3,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Per-check credit weights [B, K, T', H', W'] (mean 1 each) from critic maps[B, K, Tc, Hc, Wc].

    generator: when given, the routing-grid maps are shuffled before pooling (the official shuffled control).
    """
    maps = per_step_sum_one(maps.detach().to(torch.float32))
    grid = per_step_sum_one(resample(maps, (maps.shape[-3], bins, bins)))
    if generator is not None:
        grid = shuffle_maps(grid, generator)
    smoothed = per_step_sum_one(zero_padded_pool(grid, k))
    return normalise(resample(smoothed, latent))


@register("credit", "routing_grid")
class RoutingGridRouter(CreditRouter):
    """Official TVRL layout: critic-patch gradients, bins x bins routing grid, zero-padded k x k pooling, trilinear.

    control 'none' (the critic's maps), 'uniform' (a flat routing grid, no gradients) or 'shuffled' (the grid
    permuted per rollout and check before pooling, seeded)."""

    grad_space = "critic"

    CHECKS = Checks(bins=integer(1, example="16"), k=odd_integer("3"), control=one_of(*CONTROLS),
                    combine=one_of(*COMBINE_MODES))

    def __init__(self, bins: int = 16, k: int = 3, control: str = "none", seed: int = 0, combine: str = "mean"):
        self.bins, self.k, self.control, self.seed, self.combine = bins, k, control, seed, combine
        self.needs_grads = control != "uniform"
        self.generator = torch.Generator().manual_seed(seed)

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        if "generator" in state:
            self.generator.set_state(state["generator"])

    def per_check(self, grads, video, grid: TokenGrid, mask=None) -> torch.Tensor:
        """Per-check weights [B, K, T', H', W'] (mean 1 each); K = 1 for the uniform control."""
        latent = grid.grid_from_video(video.shape[:2] + video.shape[3:])
        if self.control == "uniform":
            flat = torch.ones(video.shape[0], 1, 1, self.bins, self.bins, device=video.device)
            return route(flat, latent, self.bins, self.k)
        if grads is None:
            raise ValueError("credit.routing_grid routes credit from the critic's patch gradients but got none")
        with torch.no_grad():
            shuffle = self.generator if self.control == "shuffled" else None
            return route(grads, latent, self.bins, self.k, shuffle)

    def __call__(self, grads, video, grid, mask=None):
        weights = self.per_check(grads, video, grid, mask)
        if self.control == "uniform":
            return weights[:, 0]
        if self.combine == "pooled":
            m = torch.ones(weights.shape[:2], dtype=torch.bool) if mask is None else mask
            summed = (weights * m.to(weights.device, weights.dtype)[..., None, None, None]).sum(dim=1)
            return normalise(summed)
        return combine(weights, mask, self.combine)
