"""Advantage weighted matching (AWM; Xue et al. 2025), with token credit.

The flow-matching error at the policy's own clean samples plays the log-prob in Flow-GRPO's clipped ratio:
logp_n = -mean_{e in token n} (v_e - u_e)^2 (times sigma or sigma^2 with `weighting`), rho = exp(L_new - L_old) with
the credit-weighted token mean L = (1/N) sum_n w_n logp_n, loss = mean -min(rho A, clip(rho, 1 - eps, 1 + eps) A)
(`matching_losses.awm_loss`). The old policy is the current one before the update (its error detached), as in
Flow-Factory's on-policy default (src/flow_factory/trainers/awm.py).
"""

from __future__ import annotations

from tvrl_bench.config.rules import Checks, one_of, positive
from tvrl_bench.objectives.matching import MatchingObjective
from tvrl_bench.objectives.matching_losses import WEIGHTINGS, awm_loss, matching_log_prob
from tvrl_bench.registry import register


@register("objectives", "awm")
class AdvantageWeightedMatching(MatchingObjective):
    """AWM: Flow-GRPO's clipped ratio over credit-weighted flow-matching errors on the rollouts' clean samples."""

    CHECKS = Checks(clip_range=positive("1e-4", note="the ratio's clip range"), weighting=one_of(*WEIGHTINGS))

    def __init__(self, clip_range: float = 1e-4, weighting: str = "uniform", timesteps: int = 2,
                 timestep_range: tuple[float, float] = (0.0, 0.9), kl_beta: float = 0.0, shared_draws: bool = False):
        super().__init__(timesteps, timestep_range, kl_beta, shared_draws)
        self.clip_range, self.weighting = clip_range, weighting

    def policy_loss(self, terms, advantages, weights):
        logp = matching_log_prob(terms.velocity, terms.target, terms.sigma, terms.to_tokens, self.weighting)
        logp_old = matching_log_prob(terms.velocity_old, terms.target, terms.sigma, terms.to_tokens, self.weighting)
        return awm_loss(logp, logp_old.detach(), advantages, weights.tokens(), self.clip_range)
