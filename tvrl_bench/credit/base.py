"""The credit-router contract and the steps shared by gradient-based routers.

A router maps the critic's pixel-level gradient magnitudes to per-token weights on the generator's token grid:

    c_ik = pool_to_tokens(g_ik)      g[B, K, F, H, W] -> c[B, K, T', H', W'] (mean over each token's footprint)
    c_ik = shape(c_ik)               router-specific: identity, k x k window average, per-frame sum, ...
    w_ik = c_ik / mean(c_ik)         mean weight 1 per rollout and check
    w_i  = combine_k(w_ik)           mean over the prompt's checks by default

Weights are detached and have mean exactly 1 per rollout.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch

from tvrl_bench.config.rules import Checks, one_of
from tvrl_bench.tokens import TokenGrid, pixels_to_tokens

COMBINE_MODES = ("mean", "max", "pooled")


class CreditRouter(ABC):
    """Maps (grads[B, K, F, H, W] or None, video[B, F, 3, H, W], grid) to weights[B, T', H', W'] (mean 1)."""

    needs_grads: bool = True
    # The method label of its trials (tracking/params.py::method_of); a router that declares none is TVRL's.
    method: str = "TVRL"
    # "pixels": grads[B, K, F, H, W] w.r.t. the decoded video; "critic": grads[B, K, Tc, Hc, Wc] w.r.t. the
    # critic's own input patches (training/scoring.py).
    grad_space: str = "pixels"
    # A router that reads the step's check texts (a positive control that locates each check's object) sets this
    # and returns a copy holding them from `given_checks`.
    needs_checks: bool = False

    @abstractmethod
    def __call__(
        self,
        grads: torch.Tensor | None,
        video: torch.Tensor,
        grid: TokenGrid,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Weights [B, T', H', W'], detached, mean 1 per rollout. mask[B, K] marks the real checks."""

    def per_check(self, grads, video, grid: TokenGrid, mask=None) -> torch.Tensor:
        """Per-check weights [B, K, T', H', W'] (mean 1 each), routed when the objective takes one ratio per check
        (credit/weights.py, objectives.tvrl_official). By default the router's one map, shared by every check
        (K = 1)."""
        return self(grads, video, grid, mask)[:, None]

    def given_checks(self, checks: list[list[str]]) -> CreditRouter:
        """The router to route this step's rollouts, whose check texts are checks[B][k]: itself by default."""
        return self

    def state_dict(self) -> dict:
        """Random state to checkpoint (a seeded router resumes where it stopped); none by default."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Restore what state_dict returned."""


def normalise(maps: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """Scale each map [..., T', H', W'] to mean 1; an all-zero map (no gradient) becomes uniform."""
    mean = maps.mean(dim=(-3, -2, -1), keepdim=True)
    flat = torch.ones_like(maps)
    return torch.where(mean > eps, maps / mean.clamp_min(eps), flat)


def combine(weights: torch.Tensor, mask: torch.Tensor | None, mode: str = "mean") -> torch.Tensor:
    """Combine per-check maps w[B, K, T', H', W'] (each mean 1) into w[B, T', H', W'] with mean 1.

    mode: "mean" of the checks' maps (docs/method.md default), "max" elementwise maximum then renormalised, or
    "pooled": raw maps summed before normalising (handled by the caller passing raw maps here).
    """
    if mode not in COMBINE_MODES:
        raise ValueError(f"credit combine mode must be one of {COMBINE_MODES}, got '{mode}'")
    b, k = weights.shape[:2]
    if mask is None:
        mask = torch.ones(b, k, dtype=torch.bool, device=weights.device)
    m = mask.to(weights.device, weights.dtype).reshape(b, k, 1, 1, 1)
    if mode == "max":
        combined = torch.where(m > 0, weights, torch.full_like(weights, -torch.inf)).amax(dim=1)
    else:
        combined = (weights * m).sum(dim=1) / m.sum(dim=1).clamp_min(1)
    return normalise(combined)


class GradientRouter(CreditRouter):
    """A router built from the critic's gradients: pool to tokens, shape the maps, normalise, combine."""

    needs_grads = True

    CHECKS = Checks(combine=one_of(*COMBINE_MODES, note="how a rollout's checks' maps become one"))

    def __init__(self, combine: str = "mean"):
        self.combine = combine

    def shape_maps(self, maps: torch.Tensor) -> torch.Tensor:
        """Router-specific transform of token maps [B, K, T', H', W'] (identity here)."""
        return maps

    def per_check(self, grads, video, grid, mask=None):
        if grads is None:
            raise ValueError(f"{type(self).__name__} routes credit from critic gradients but got none")
        with torch.no_grad():
            return normalise(self.shape_maps(pixels_to_tokens(grads.detach().to(torch.float32), grid)))

    def __call__(self, grads, video, grid, mask=None):
        if grads is None:
            raise ValueError(f"{type(self).__name__} routes credit from critic gradients but got none")
        with torch.no_grad():
            maps = self.shape_maps(pixels_to_tokens(grads.detach().to(torch.float32), grid))
            if self.combine == "pooled":
                m = torch.ones(maps.shape[:2], dtype=torch.bool) if mask is None else mask
                maps = (maps * m.to(maps.device, maps.dtype)[..., None, None, None]).sum(dim=1, keepdim=True)
                return combine(normalise(maps), None, "mean")
            return combine(normalise(maps), mask, self.combine)
