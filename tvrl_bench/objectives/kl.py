"""The official TVRL KL terms and their adaptive coefficient (pure pieces; see docs/fidelity.md for wiring).

loss = policy + c * (moving_weight * KL_moving + stepwise_weight * KL_stepwise), official weights 1.0 and 0.1:
- KL_moving = mean (mu - mu_ref)^2 / (2 sigma^2) against a reference policy reloaded from the current policy every
  `refresh_every` optimizer steps (`RefreshSchedule`); `losses.gaussian_mean_kl` computes the term.
- KL_stepwise = mean(logp_old - logp_new) over the transition's tokens (`stepwise_kl`).
- c: `AdaptiveKLCoefficient`: rises linearly from `min_coef` to `target` over the first `ramp_steps` updates, then
  multiplies by 0.9 when the mean KL of the last `window` updates exceeds 1.5 x target, by 1.1 when it is below
  0.5 x target, clamped to [min_coef, max_coef].
"""

from __future__ import annotations

import torch


def stepwise_kl(logp_old: torch.Tensor, logp_new: torch.Tensor) -> torch.Tensor:
    """[B] mean over everything but the batch axis of logp_old - logp_new (per-token log-probs [B, ...])."""
    diff = logp_old.detach().to(torch.float32) - logp_new.to(torch.float32)
    return diff.reshape(diff.shape[0], -1).mean(dim=1)


def combined_kl(moving: torch.Tensor, stepwise: torch.Tensor, moving_weight: float = 1.0,
                stepwise_weight: float = 0.1) -> torch.Tensor:
    """moving_weight * KL_moving + stepwise_weight * KL_stepwise, elementwise."""
    return moving_weight * moving + stepwise_weight * stepwise


class AdaptiveKLCoefficient:
    """c_n after n updates: linear ramp min_coef -> target over ramp_steps, then x0.9 / x1.1 steps (see module)."""

    def __init__(self, min_coef: float = 1e-7, target: float = 1e-5, max_coef: float = 1e-5, ramp_steps: int = 100,
                 window: int = 10):
        if not 0 < min_coef <= target <= max_coef:
            raise ValueError(f"need 0 < min_coef <= target <= max_coef, got {min_coef}, {target}, {max_coef}")
        self.min_coef, self.target, self.max_coef = min_coef, target, max_coef
        self.ramp_steps, self.window = ramp_steps, window
        self.coef, self.steps, self.history = min_coef, 0, []

    def update(self, kl: float) -> float:
        """Record one update's measured KL and return the coefficient for the next one."""
        self.steps += 1
        self.history = (self.history + [float(kl)])[-max(self.window, 1):]
        if self.steps < self.ramp_steps:
            self.coef = self.min_coef + (self.target - self.min_coef) * self.steps / self.ramp_steps
        elif len(self.history) >= self.window:
            error = sum(self.history) / len(self.history) - self.target
            if error > 0.5 * self.target:
                self.coef *= 0.9
            elif error < -0.5 * self.target:
                self.coef *= 1.1
            self.coef = min(max(self.coef, self.min_coef), self.max_coef)
        return self.coef

    def state_dict(self) -> dict:
        return {"coef": self.coef, "steps": self.steps, "history": list(self.history)}

    def load_state_dict(self, state: dict) -> None:
        self.coef, self.steps, self.history = state["coef"], state["steps"], list(state["history"])


class RefreshSchedule:
    """Whether the moving-KL reference is reloaded from the policy after optimizer step n (every `every` steps)."""

    def __init__(self, every: int = 10):
        if every < 1:
            raise ValueError(f"refresh interval must be >= 1, got {every}")
        self.every = every

    def due(self, optimizer_steps: int) -> bool:
        return optimizer_steps > 0 and optimizer_steps % self.every == 0
