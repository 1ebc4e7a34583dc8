"""Objectives that train on the policy's own clean samples by flow matching, instead of transition log-probs.

The trainer's matching pass (training/step/matching.py) noises each rollout's clean sample x0 to a level sigma drawn
from the trajectory's own noise levels, x = (1 - sigma) x0 + sigma noise, and hands the objective the velocities it
needs (`MatchingTerms`); the objective turns them into a loss with the step's advantages and credit weights. What a
matching objective declares, beside the `Objective` parts:

- `timesteps`: noise draws per update; `timestep_range=(start, end)`: the draws take the levels of the schedule's
  steps i with start <= i / num_steps < end (fractions of the denoising steps, from pure noise).
- `draws(unit_groups)`: which noise draw each training unit takes, its own by default; with `shared_draws` every
  unit of a group (the rollouts of one prompt) takes the same level and noise. The advantages of a group sum to
  zero, so the part of the units' gradients that depends only on the draw cancels in their advantage-weighted sum:
  common random numbers as a control variate.
- `units(rows, advantages, groups)`: the training units [U, pair_size] (one rollout each; DPO: a preferred and a
  rejected rollout of one group, which share the noise and the level).
- `old`: a slowly moving copy of the policy (a `Reference`) whose velocity is `velocity_old`; None: the current
  parameters before this update, i.e. the policy's own velocity detached (no second forward).
- `reference` (objective.reference): the frozen policy of a KL or DPO term, whose velocity is `velocity_ref`.
- `ORDER_ONLY`: the relation an objective that reads only the order of a group's advantages (DPO, best-of-N)
  declares, refusing the trial's advantage_std / advantage_eps, which cannot change that order.
- `matching_loss(terms, advantages[M], weights) -> (loss, stats)`; with `kl_beta` > 0 it adds
  kl_beta * mean (v - v_ref)^2 (a velocity-space KL to the pretrained policy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import torch

from tvrl_bench.config.rules import Checks, Relation, Unknown, Values, fraction_range, integer, number
from tvrl_bench.config.takes_effect import takes_effect_when
from tvrl_bench.credit.weights import CreditWeights
from tvrl_bench.objectives.base import MATCHING, Objective
from tvrl_bench.objectives.matching_losses import ToTokens
from tvrl_bench.objectives.reference import PretrainedReference


def groups_with_a_preference(groups: torch.Tensor, advantages: torch.Tensor) -> Iterator[torch.Tensor]:
    """The positions [m] (into groups[M], advantages[M]) of each group whose advantages are not all equal, group by
    group: the groups in which a ranking objective has a better and a worse rollout to tell apart."""
    for group in torch.unique(groups):
        members = (groups == group).nonzero().flatten()
        values = advantages[members]
        if len(members) >= 2 and bool(values.max() > values.min()):
            yield members


def _order_only(v: Values):
    """Why the trial's advantage scale changes nothing for an objective that reads only the order of each group's
    advantages (a null control permuting across the whole step reads their sizes)."""
    try:
        if not v["within_groups"]:
            return None
    except Unknown:
        pass
    return ("this objective reads only the order of each group's advantages, which neither the std nor its floor "
            "changes", "use an objective that weighs rollouts by their advantages (objectives.nft, objectives.grpo)")


# The trial's advantage scale, inert for an objective that picks a group's rollouts by their advantages' order.
ORDER_ONLY = takes_effect_when(("training.trial.advantage_std", "training.trial.advantage_eps"), (), _order_only)


@dataclass
class MatchingTerms:
    """One chunk of M rollouts noised at sigma[M]: the policy's velocity[M, C, T, H, W] (with gradients), the old
    policy's velocity_old (detached), the reference's velocity_ref (detached; None without a reference), the
    flow-matching target u = noise - x0 and `to_tokens` ([M, C, T, H, W] -> per-token means [M, N])."""

    velocity: torch.Tensor
    velocity_old: torch.Tensor
    velocity_ref: torch.Tensor | None
    target: torch.Tensor
    sigma: torch.Tensor
    to_tokens: ToTokens


def steps_in_range(timestep_range: tuple[float, float], steps: int) -> list[int]:
    """The steps i of a schedule of `steps` steps with start <= i / steps < end."""
    start, end = (float(v) for v in timestep_range)
    return [i for i in range(steps) if start <= i / steps < end]


def _range_holds_a_step(v: Values) -> str | None:
    steps = v["training.schedule.num_steps"]
    if steps_in_range(v["timestep_range"], steps):
        return None
    fractions = ", ".join(f"{i / steps:g}" for i in range(steps))
    return (f"{v.binding('timestep_range')} holds none of the schedule's {steps} steps (their fractions are "
            f"{fractions}; {v.name('timestep_range')} keeps those with start <= i / {steps} < end), so no noise level "
            f"could be drawn; widen it, e.g. {v.name('timestep_range')} = (0.0, 0.9)")


class MatchingObjective(Objective):
    """The contract of a flow-matching objective (module docstring); subclasses write `policy_loss(terms, A, w)`."""

    update = MATCHING
    pair_size = 1

    CHECKS = Checks(
        [Relation(("timestep_range", "training.schedule.num_steps"), _range_holds_a_step)],
        timesteps=integer(1, example="2", note="noise draws per update"),
        timestep_range=fraction_range(),
        kl_beta=number(0, example="0.0", note="0: no KL term"),
    )

    def __init__(self, timesteps: int = 2, timestep_range: tuple[float, float] = (0.0, 0.9), kl_beta: float = 0.0,
                 shared_draws: bool = False):
        start, end = (float(v) for v in timestep_range)
        self.timesteps, self.timestep_range, self.kl_beta = timesteps, (start, end), kl_beta
        self.shared_draws = bool(shared_draws)
        self.reference = PretrainedReference() if kl_beta > 0 else None

    def levels(self, sigmas: torch.Tensor) -> torch.Tensor:
        """The noise levels [L] a draw may take: sigmas[i] of the steps i (sigmas[S + 1], S steps) in the range."""
        steps = len(sigmas) - 1
        chosen = steps_in_range(self.timestep_range, steps)
        if not chosen:  # refused when the config is read (_range_holds_a_step); a hand-built trial can get here
            raise ValueError(f"timestep_range {self.timestep_range} holds none of the schedule's {steps} steps")
        return sigmas[chosen]

    def draws(self, unit_groups: torch.Tensor) -> torch.Tensor:
        """The draw index [U] of each training unit (unit_groups[U]: the group of its first rollout), numbered
        0..D-1: one draw per unit, or one per group with `shared_draws`."""
        if self.shared_draws:
            return torch.unique(unit_groups, return_inverse=True)[1]
        return torch.arange(len(unit_groups))

    def units(self, rows: torch.Tensor, advantages: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
        """The training units [U, pair_size] of the minibatch rows[M] (advantages[M], groups[M]): every rollout."""
        return rows[:, None]

    def policy_loss(self, terms: MatchingTerms, advantages: torch.Tensor,
                    weights: CreditWeights) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        raise NotImplementedError

    def matching_loss(self, terms: MatchingTerms, advantages: torch.Tensor,
                      weights: CreditWeights) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The policy loss of the chunk, plus kl_beta * mean (v - v_ref)^2 when the objective has a KL term."""
        loss, stats = self.policy_loss(terms, advantages, weights)
        stats = {**stats, "policy_loss": loss.detach()}
        if self.kl_beta > 0:
            kl = ((terms.velocity.float() - terms.velocity_ref.float()) ** 2).flatten(1).mean(dim=1)
            loss = loss + self.kl_beta * kl.mean()
            stats["kl"] = kl.detach().mean()
        return loss, stats

    def loss(self, *args: Any, **kwargs: Any) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        raise TypeError(f"{type(self).__name__} trains by flow matching: its loss is matching_loss(terms, ...)")
