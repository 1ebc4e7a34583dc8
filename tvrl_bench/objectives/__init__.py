"""Objectives: group-relative advantages, the credit-weighted clipped ratio loss and its per-token variant."""

from tvrl_bench.objectives.advantages import group_advantages
from tvrl_bench.objectives.base import Objective
from tvrl_bench.objectives.losses import (
    clipped_surrogate,
    credit_weighted_grpo_loss,
    gaussian_mean_kl,
    per_token_ratio_loss,
    weighted_log_prob,
)
from tvrl_bench.objectives.step_rewards import StepRewards

__all__ = [
    "Objective",
    "StepRewards",
    "clipped_surrogate",
    "credit_weighted_grpo_loss",
    "gaussian_mean_kl",
    "group_advantages",
    "per_token_ratio_loss",
    "weighted_log_prob",
]
