"""Registered objectives: thin wrappers over the pure loss functions."""

from __future__ import annotations

import torch

from tvrl_bench.objectives.losses import credit_weighted_grpo_loss, per_token_ratio_loss
from tvrl_bench.registry import register


class Objective:
    """loss(logp_new[B,S,N], logp_old[B,S,N], advantages[B], weights[B,N], kl[B,S] | None) -> (loss, stats)."""

    def __init__(self, clip_range: float = 1e-4, kl_beta: float = 0.0):
        if clip_range <= 0:
            raise ValueError(f"clip_range must be > 0, got {clip_range}")
        if kl_beta < 0:
            raise ValueError(f"kl_beta must be >= 0, got {kl_beta}")
        self.clip_range = clip_range
        self.kl_beta = kl_beta

    def policy_loss(self, logp_new, logp_old, advantages, weights):
        raise NotImplementedError

    def loss(
        self,
        logp_new: torch.Tensor,
        logp_old: torch.Tensor,
        advantages: torch.Tensor,
        weights: torch.Tensor,
        kl: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        loss, stats = self.policy_loss(logp_new, logp_old, advantages, weights)
        stats = {**stats, "policy_loss": loss.detach()}
        if self.kl_beta > 0:
            if kl is None:
                raise ValueError("kl_beta > 0 but no KL term was computed for this batch")
            loss = loss + self.kl_beta * kl.mean()
            stats["kl"] = kl.detach().mean()
        return loss, stats


@register("objectives", "grpo")
class CreditWeightedGRPO(Objective):
    """Clipped ratio of credit-weighted transition log-probs (TVRL; Flow-GRPO with uniform credit)."""

    def policy_loss(self, logp_new, logp_old, advantages, weights):
        return credit_weighted_grpo_loss(logp_new, logp_old, advantages, weights, self.clip_range)


@register("objectives", "per_token")
class PerTokenRatioGRPO(Objective):
    """Variant: each token's ratio clipped on its own, then averaged with the credit weights."""

    def policy_loss(self, logp_new, logp_old, advantages, weights):
        return per_token_ratio_loss(logp_new, logp_old, advantages, weights, self.clip_range)
