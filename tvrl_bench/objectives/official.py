"""The official TVRL objective: per-check ratios or a merged map, per-question advantages, moving/stepwise KL.

loss = policy_loss + c * (moving_weight * KL_moving + stepwise_weight * KL_stepwise)

- mode "video_adv" (official default): weights[B, K, N], one clipped ratio per check with the video's advantage,
  averaged over the video's checks (`per_check.per_check_ratio_loss`); "question": the same ratios with
  per-question advantages A[B, K] (`per_check.question_advantages`); "merged_gradient": one merged map [B, N],
  the loss of `objectives.grpo` (what this repository did before).
- kl "moving_stepwise": KL_moving = mean (mu - mu_ref)^2 / (2 sigma^2) against a reference reloaded from the policy
  every `refresh_every` optimizer steps; KL_stepwise = mean(logp_old - logp_new); c from `AdaptiveKLCoefficient`.
  kl "none": no KL term.

It overrides the hooks of the Objective base class that the trainer calls: `per_check_weights`,
`per_check_advantages` / `check_advantages`, `bind` (the trainable parameters), `reference_context` (the KL's
reference forward), `after_update` (once per optimizer step), `state_dict` / `load_state_dict` (checkpoints).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import torch

from tvrl_bench.objectives.base import Objective
from tvrl_bench.objectives.kl import AdaptiveKLCoefficient, RefreshSchedule, stepwise_kl
from tvrl_bench.objectives.losses import credit_weighted_grpo_loss
from tvrl_bench.objectives.per_check import per_check_ratio_loss, question_advantages
from tvrl_bench.registry import register
from tvrl_bench.objectives.reference import MovingReference

MODES = ("video_adv", "question", "merged_gradient")
KL_MODES = ("none", "moving_stepwise")


@register("objectives", "tvrl_official")
class OfficialTVRL(Objective):
    """Official TVRL loss: per-check clipped ratios (video or per-question advantages) + moving/stepwise adaptive KL."""

    policy_reference = False  # its KL reference is its own moving snapshot

    def __init__(
        self,
        clip_range: float = 1e-4,
        mode: str = "video_adv",
        kl: str = "moving_stepwise",
        moving_weight: float = 1.0,
        stepwise_weight: float = 0.1,
        kl_min_coef: float = 1e-7,
        kl_target: float = 1e-5,
        kl_max_coef: float = 1e-5,
        kl_ramp_steps: int = 100,
        kl_window: int = 10,
        refresh_every: int = 10,
        advantage_eps: float = 1e-6,
        advantage_clip: float = 5.0,
    ):
        if mode not in MODES:
            raise ValueError(f"objectives.tvrl_official.mode must be one of {MODES}, got '{mode}'")
        if kl not in KL_MODES:
            raise ValueError(f"objectives.tvrl_official.kl must be one of {KL_MODES}, got '{kl}'")
        super().__init__(clip_range, 1.0 if kl != "none" else 0.0)
        self.mode, self.kl = mode, kl
        self.moving_weight, self.stepwise_weight = moving_weight, stepwise_weight
        self.controller = AdaptiveKLCoefficient(kl_min_coef, kl_target, kl_max_coef, kl_ramp_steps, kl_window)
        self.refresh = RefreshSchedule(refresh_every)
        self.advantage_eps, self.advantage_clip = advantage_eps, advantage_clip
        self.moving: MovingReference | None = None
        self.updates = 0

    # -- what the trainer asks ----------------------------------------------------------------------------------
    @property
    def per_check_weights(self) -> bool:
        return self.mode != "merged_gradient"

    @property
    def per_check_advantages(self) -> bool:
        return self.mode == "question"

    def check_advantages(self, scores: torch.Tensor, groups: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """A[B, K] per question (population std floored at advantage_eps, clipped)."""
        return question_advantages(scores, groups, mask, self.advantage_eps, self.advantage_clip)

    def bind(self, parameters: list[torch.nn.Parameter]) -> None:
        if self.kl != "none":
            self.moving = MovingReference(parameters)

    def reference_context(self, policy: Any):
        """The context in which the policy's velocity is the reference's (the moving snapshot)."""
        if self.moving is None:
            return policy.reference() if self.kl == "none" else nullcontext()
        return self.moving.swapped()

    def after_update(self, stats: dict[str, float]) -> None:
        """One optimizer step done: update the KL coefficient from the step's KL, refresh the reference if due."""
        self.updates += 1
        if self.kl == "none":
            return
        self.controller.update(stats.get("kl", 0.0))
        if self.moving is not None and self.refresh.due(self.updates):
            self.moving.refresh()

    def state_dict(self) -> dict:
        state: dict[str, Any] = {"updates": self.updates, "controller": self.controller.state_dict()}
        if self.moving is not None:
            state["moving"] = self.moving.state_dict()
        return state

    def load_state_dict(self, state: dict) -> None:
        self.updates = int(state.get("updates", 0))
        if "controller" in state:
            self.controller.load_state_dict(state["controller"])
        if self.moving is not None and "moving" in state:
            self.moving.load_state_dict(state["moving"])

    # -- the loss -----------------------------------------------------------------------------------------------
    def policy_loss(self, logp_new, logp_old, advantages, weights):
        if weights.dim() == 3:  # [B, K, N]: a zero map marks a missing check
            mask = weights.abs().sum(dim=-1) > 0
            return per_check_ratio_loss(logp_new, logp_old, advantages, weights, mask, self.clip_range)
        return credit_weighted_grpo_loss(logp_new, logp_old, advantages, weights, self.clip_range)

    def loss(self, logp_new, logp_old, advantages, weights, kl=None):
        loss, stats = self.policy_loss(logp_new, logp_old, advantages, weights)
        stats = {**stats, "policy_loss": loss.detach()}
        if self.kl == "none":
            return loss, stats
        if kl is None:
            raise ValueError("objectives.tvrl_official: the KL term needs the reference's transition mean")
        stepwise = stepwise_kl(logp_old, logp_new)
        combined = self.moving_weight * kl.mean() + self.stepwise_weight * stepwise.mean()
        coef = self.controller.coef
        stats.update(kl=combined.detach(), kl_moving=kl.detach().mean(), kl_stepwise=stepwise.detach().mean(),
                     kl_coef=torch.tensor(coef))
        return loss + coef * combined, stats
