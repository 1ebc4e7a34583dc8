"""Credit weights as they travel from the router to the loss, in the one layout the objective consumes.

The layout is decided once per step, when the credit is routed (`route`), from what the objective declares
(`Objective.credit_layout`):

- "merged": the router's combined map, one per rollout; the loss weighs tokens by `tokens()` [B, N].
- "per_check": besides it, one map per check, checks[B, K, N] (mean 1 per check) with mask[B, K]; the loss takes
  one ratio per check (`by_check()`).

Either way `merged` keeps the combined map [B, T', H', W'] (mean 1 per rollout) that the step's metrics and media
show (credit entropy, the heatmap). Weights are detached.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from tvrl_bench.credit.base import CreditRouter
from tvrl_bench.tokens import TokenGrid

MERGED, PER_CHECK = "merged", "per_check"
LAYOUTS = (MERGED, PER_CHECK)


@dataclass(frozen=True)
class CreditWeights:
    """merged[B, T', H', W'] (any [B, ...]: its trailing axes are the N tokens); with the per-check layout also
    checks[B, K, N] and mask[B, K] (the checks whose map is not all zero; only those take part in the loss)."""

    merged: torch.Tensor
    checks: torch.Tensor | None = None
    mask: torch.Tensor | None = None

    @classmethod
    def of_checks(cls, merged: torch.Tensor, maps: torch.Tensor, mask: torch.Tensor | None = None) -> CreditWeights:
        """Per-check weights from maps[B, K, ...] (one map per check, or K = 1: one map shared by every check).

        mask[B, K]: the prompts' real checks; when the router gave one map per check, a missing check's map is
        zeroed. A zero map marks a check that takes no part in the loss.
        """
        b, k = maps.shape[:2]
        checks = maps.reshape(b, k, -1)
        if mask is not None and k == mask.shape[1]:
            checks = checks * mask.to(checks)[..., None]
        return cls(merged, checks, checks.abs().sum(dim=-1) > 0)

    @property
    def layout(self) -> str:
        return MERGED if self.checks is None else PER_CHECK

    def __len__(self) -> int:
        return self.merged.shape[0]

    def __getitem__(self, rows: torch.Tensor | slice) -> CreditWeights:
        """The weights of rollouts `rows` (an index tensor [M] or a slice), in the same layout."""
        if self.checks is None:
            return CreditWeights(self.merged[rows])
        return CreditWeights(self.merged[rows], self.checks[rows], self.mask[rows])

    def tokens(self) -> torch.Tensor:
        """The merged weights per token, [B, N]."""
        return self.merged.reshape(len(self), -1)

    def by_check(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(checks[B, K, N], mask[B, K]) of per-check weights."""
        if self.checks is None:
            raise ValueError("these credit weights are merged: an objective that takes one ratio per check declares "
                             f"credit_layout = '{PER_CHECK}', so the step routes one map per check")
        return self.checks, self.mask


def route(router: CreditRouter, grads: torch.Tensor | None, video: torch.Tensor, grid: TokenGrid,
          mask: torch.Tensor | None, layout: str = MERGED, device: torch.device | str | None = None,
          checks: list[list[str]] | None = None) -> CreditWeights:
    """The step's credit in `layout`: grads and video as the router takes them, mask[B, K] the real checks,
    checks[B][k] their texts (read only by a router that `needs_checks`).

    The merged map is always routed (the step logs it), before the per-check maps: a seeded router draws in that
    order.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"credit layout must be one of {LAYOUTS}, got '{layout}'")
    if router.needs_checks:
        router = router.given_checks(checks)
    merged = router(grads, video, grid, mask)
    if layout == MERGED:
        return CreditWeights(merged.to(device))
    maps = router.per_check(grads, video, grid, mask)
    return CreditWeights.of_checks(merged.to(device), maps.to(device), mask)
