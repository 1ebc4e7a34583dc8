"""The objective contract: a policy-gradient loss over transition log-probs, and the hooks the trainer calls."""

from __future__ import annotations

from typing import Any, ContextManager

import torch


class Objective:
    """loss(logp_new[B,S,N], logp_old[B,S,N], advantages[B], weights[B,N], kl[B,S] | None) -> (loss, stats).

    Besides the loss, the trainer calls these hooks, which do nothing here: `step_advantages` (the step's
    advantages as the loss uses them), `per_check_weights` / `per_check_advantages` / `check_advantages` (one map
    and one advantage per check instead of merged ones), `bind` (the trainable parameters, once),
    `reference_context` (where the policy's velocity is the KL reference's), `after_update` (after each
    optimizer step) and `state_dict` / `load_state_dict` (what a checkpoint keeps).
    """

    per_check_weights: bool = False  # weights[B, K, N], one map per check, instead of a merged weights[B, N]
    per_check_advantages: bool = False  # advantages[B, K] from `check_advantages` instead of advantages[B]
    policy_reference: bool = True  # a KL term's reference is the policy's (Policy.reference), not the objective's

    def __init__(self, clip_range: float = 1e-4, kl_beta: float = 0.0):
        if clip_range <= 0:
            raise ValueError(f"clip_range must be > 0, got {clip_range}")
        if kl_beta < 0:
            raise ValueError(f"kl_beta must be >= 0, got {kl_beta}")
        self.clip_range = clip_range
        self.kl_beta = kl_beta

    def policy_loss(self, logp_new, logp_old, advantages, weights):
        raise NotImplementedError

    def step_advantages(self, advantages: torch.Tensor, generator: torch.Generator, groups: torch.Tensor | None = None) -> torch.Tensor:
        """The advantages[B] of all the step's rollouts (every process) as the loss will use them: unchanged.
        groups[B]: the rollouts' group ids (rollouts of one prompt share one)."""
        return advantages

    def check_advantages(self, scores: torch.Tensor, groups: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Per-check advantages [B, K] from scores[B, K] (objectives with per_check_advantages only)."""
        raise NotImplementedError(f"{type(self).__name__} has no per-check advantages")

    def bind(self, parameters: list[torch.nn.Parameter]) -> None:
        """The trainable parameters, given once before training."""

    def reference_context(self, policy: Any) -> ContextManager:
        """A context in which policy.velocity is the KL reference's: the policy's own reference (adapters off)."""
        return policy.reference()

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
