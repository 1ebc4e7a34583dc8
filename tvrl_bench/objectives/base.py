"""The objective contract: a policy-gradient loss over transition log-probs, and the parts the trainer calls."""

from __future__ import annotations

from typing import Any

import torch

from tvrl_bench.config.rules import Checks, number, positive
from tvrl_bench.credit.weights import MERGED, CreditWeights
from tvrl_bench.objectives.reference import PretrainedReference, Reference
from tvrl_bench.objectives.step_rewards import StepRewards

TRANSITIONS, MATCHING = "transitions", "matching"


class Objective:
    """What the trainer calls, each without asking the objective anything first:

    - `credit_layout`: the credit weights `loss` takes, "merged" [B, N] or "per_check" [B, K, N]
      (credit/weights.py); a step routes its credit in this layout once.
    - `advantages(step)`: the step's advantages as the loss uses them, [B] or [B, K] (one per check), from its
      group-relative advantages, scores, groups and mask (`StepRewards`); unchanged here.
    - `reference`: the KL term's reference policy (objectives/reference.py: `bind`, `context`,
      `keeps_policy_copy`; its `after_update` and `state_dict` are the objective's to call), None without a KL
      term; the update computes a KL term exactly when there is one.
    - `old`: a slowly moving copy of the policy a matching objective compares against (objectives/matching.py),
      None otherwise; bound like `reference`, its `after_update` is the objective's to call.
    - `loss(logp_new[B, S, N], logp_old[B, S, N], advantages[B] or [B, K], weights: CreditWeights,
      kl[B, S] | None) -> (loss, stats)`.
    - `after_update(stats)` after each optimizer step, `state_dict` / `load_state_dict` (what a checkpoint keeps).

    `update` says which pass of the trainer computes the loss: "transitions" (this contract: the trained
    transitions' log-probs, training/step/update.py) or "matching" (flow matching on the rollouts' clean samples,
    objectives/matching.py, training/step/matching.py). `needs_old_means`: the update also hands `loss` the
    transitions' mean shift against the sampling-time means (`guard=GuardTerms`, objectives/losses.py), which the
    rollout then keeps.

    `reads_check_scores(values)`: whether it needs the critic's answer to each check (not asked of a built one).

    `method` is the method label its trials carry (tracking/params.py::method_of); None defers to the credit
    router's. `clip_range` and `kl_beta` (a KL term to the pretrained policy when > 0) are constructor arguments.
    """

    method: str | None = None
    update: str = TRANSITIONS
    needs_old_means: bool = False
    credit_layout: str = MERGED
    reference: Reference | None = None
    old: Reference | None = None

    CHECKS = Checks(
        clip_range=positive("1e-4", note="the ratio's clip range"),
        kl_beta=number(0, example="0.0", note="0: no KL term"),
    )

    def __init__(self, clip_range: float = 1e-4, kl_beta: float = 0.0):
        self.clip_range = clip_range
        self.kl_beta = kl_beta
        self.reference = PretrainedReference() if kl_beta > 0 else None

    @staticmethod
    def reads_check_scores(values: dict[str, Any]) -> str | None:
        """Why this objective, configured with `values` (its bindings over its defaults), reads the critic's answer
        to each check, as a binding and its effect ("mode = 'question' computes ..."); None: it reads the video's
        reward only. Asked of the parsed config (config/trial_fit.py), so a critic with no answer per check (a
        scalar scorer) is refused before anything is built."""
        return None

    def policy_loss(self, logp_new: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor,
                    weights: CreditWeights) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        raise NotImplementedError

    def advantages(self, step: StepRewards) -> torch.Tensor:
        """The advantages[B] of all the step's rollouts (every process) as the loss will use them: unchanged."""
        return step.advantages

    def after_update(self, stats: dict[str, float]) -> None:
        """Called after every optimizer step with the step's statistics."""

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint must keep of the objective (nothing here)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""

    def loss(
        self,
        logp_new: torch.Tensor,
        logp_old: torch.Tensor,
        advantages: torch.Tensor,
        weights: CreditWeights,
        kl: torch.Tensor | None = None,
        guard: Any = None,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The policy loss plus kl_beta * mean(kl); `guard` is given only to objectives that need old means."""
        return self.with_kl(*self.policy_loss(logp_new, logp_old, advantages, weights), kl)

    def with_kl(self, loss: torch.Tensor, stats: dict[str, torch.Tensor],
                kl: torch.Tensor | None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """(loss + kl_beta * mean(kl[B, S]), stats with policy_loss and kl) when kl_beta > 0, else the policy loss."""
        stats = {**stats, "policy_loss": loss.detach()}
        if self.kl_beta > 0:
            if kl is None:
                raise ValueError("kl_beta > 0 but no KL term was computed for this batch")
            loss = loss + self.kl_beta * kl.mean()
            stats["kl"] = kl.detach().mean()
        return loss, stats
