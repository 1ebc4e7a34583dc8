"""GRPO-Guard (Wang et al. 2025): Flow-GRPO's clipped ratio with the per-step ratio regulated, with token credit.

A transition's log-ratio log rho = L_new - L_old is rescaled by the step's noise scale std = sqrt(Var) and shifted
by the squared drift of the transition mean from the sampling-time mean, so that ratios of every step are centred
alike and clipping bites on over-confident updates (Flow-Factory's GRPOGuardTrainer, src/flow_factory/trainers/grpo.py):

    log rho_guard = std * (L_new - L_old) + D / (2 std),    D = mean (mu - mu_old)^2

Per token here: l_n' = std_n (l_new,n - l_old,n) + D_n / (2 std_n) with D_n the token's mean squared mean shift,
combined with the credit weights as (1/N) sum_n w_n l_n'; with w = 1 it is the published per-sample form.
"""

from __future__ import annotations

from tvrl_bench.objectives.grpo import CreditWeightedGRPO
from tvrl_bench.objectives.losses import guarded_grpo_loss
from tvrl_bench.registry import register


@register("objectives", "grpo_guard")
class GuardedGRPO(CreditWeightedGRPO):
    """GRPO-Guard: the clipped ratio of objectives.grpo with each step's log-ratio rescaled and re-centred."""

    needs_old_means = True

    def loss(self, logp_new, logp_old, advantages, weights, kl=None, guard=None):
        if guard is None:
            raise ValueError("objectives.grpo_guard needs the transitions' mean shift (guard=GuardTerms); the trainer "
                             "passes it when the objective declares needs_old_means")
        policy = guarded_grpo_loss(logp_new, logp_old, advantages, weights.tokens(), guard, self.clip_range)
        return self.with_kl(*policy, kl)
