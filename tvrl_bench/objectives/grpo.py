"""Registered objectives: thin wrappers over the pure loss functions (the contract is `base.Objective`)."""

from __future__ import annotations

from typing import Any

from tvrl_bench.objectives.advantages import PermutedAdvantages
from tvrl_bench.objectives.base import Objective
from tvrl_bench.objectives.losses import credit_weighted_grpo_loss, per_token_ratio_loss
from tvrl_bench.registry import register


@register("objectives", "grpo")
class CreditWeightedGRPO(Objective):
    """Clipped ratio of credit-weighted transition log-probs (TVRL; Flow-GRPO with uniform credit)."""

    def policy_loss(self, logp_new, logp_old, advantages, weights):
        return credit_weighted_grpo_loss(logp_new, logp_old, advantages, weights.tokens(), self.clip_range)


@register("objectives", "per_token")
class PerTokenRatioGRPO(Objective):
    """Variant: each token's ratio clipped on its own, then averaged with the credit weights."""

    def policy_loss(self, logp_new, logp_old, advantages, weights):
        return per_token_ratio_loss(logp_new, logp_old, advantages, weights.tokens(), self.clip_range)


@register("objectives", "null")
class NullControl(PermutedAdvantages, CreditWeightedGRPO):
    """The null control: TVRL's loss with the step's advantages randomly permuted across its rollouts.

    Updates keep their size (the same multiset of advantages, the same credit maps and clipping) but carry no
    information about which rollout was better, so any gain over the base it shows is what noise and drift buy.
    """

    def __init__(self, *args: Any, within_groups: bool = False, **kwargs: Any):
        """within_groups defaults to False here (the permutation across the step that the first toy studies ran)."""
        super().__init__(*args, within_groups=within_groups, **kwargs)
