"""What an objective's advantages are computed from: one step's rewards on every process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch


@dataclass(frozen=True)
class StepRewards:
    """One step's outcome, B = all its rollouts (every process).

    advantages[B]: the group-relative advantages of the rewards (training.trial.advantage_std / _eps / _clip).
    groups[B]: the rollouts' group ids (rollouts of one prompt share one). generator: the step's own seeded draws.
    checks: returns (scores[B, K], mask[B, K]), the critic's score of every check; it gathers them from every
    process, a collective, so an objective calls it on every process or on none (the same objective runs on all).
    """

    advantages: torch.Tensor
    groups: torch.Tensor | None = None
    generator: torch.Generator | None = None
    checks: Callable[[], tuple[torch.Tensor, torch.Tensor]] | None = None

    def check_scores(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(scores[B, K], mask[B, K]) of every process."""
        if self.checks is None:
            raise ValueError("this step's rewards carry no per-check scores")
        return self.checks()
