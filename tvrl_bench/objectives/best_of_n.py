"""Best-of-N distillation (reward-ranked fine-tuning, RAFT; Dong et al. 2023) by flow matching, with token credit.

Each group's `top_k` rollouts by advantage (a group whose advantages are all equal has no best and gives none) are
fitted by plain flow matching at a noise level of the trajectory: the policy's own pretraining loss on the samples
its critic ranked best, nothing pushed away from the others. The per-unit error is the credit-weighted token mean of
(v - u)^2 times sigma^p (`weighting`: 'uniform' p = 0, the velocity loss; 't' p = 1, an x0 error weighted by
1 / sigma, the v2 base's pretraining loss; 't**2' p = 2, the plain x0 error):

    loss = mean over the selected units of (1/N) sum_n w_n sigma^p mean_{e in token n} (v_e - u_e)^2

Where NFT's first-order step is an advantage-weighted sum over every rollout (the better pulled, the worse pushed),
this is a sum over the winners alone, so it also carries the pull of fitting one's own samples (sharpening the
policy's modes); its null control (`objectives.best_of_n_null`, a random rollout of each group in place of the best)
measures that pull by itself.
"""

from __future__ import annotations

import torch

from tvrl_bench.config.rules import Checks, Relation, Values, integer, one_of
from tvrl_bench.objectives.advantages import PermutedAdvantages
from tvrl_bench.objectives.matching import ORDER_ONLY, MatchingObjective, groups_with_a_preference
from tvrl_bench.objectives.matching_losses import WEIGHTINGS, credit_mean, matching_log_prob
from tvrl_bench.registry import register


def top_units(rows: torch.Tensor, advantages: torch.Tensor, groups: torch.Tensor, top_k: int) -> torch.Tensor:
    """[U, 1] the rows (of rows[M]) of each group's top_k advantages (groups[M], advantages[M]); a group whose
    advantages are all equal gives none. Ties at the cut are broken by position (the earlier row)."""
    chosen = []
    for members in groups_with_a_preference(groups, advantages):
        order = torch.sort(advantages[members], descending=True, stable=True).indices[:top_k]
        chosen.append(rows[members[order]])
    return torch.cat(chosen)[:, None] if chosen else rows.new_zeros((0, 1))


def _top_k_selects(v: Values) -> str | None:
    group = v["training.trial.group_size"]
    if v["top_k"] < group:
        return None
    return (f"{v.binding('top_k')} keeps every rollout of a group of {v.binding('training.trial.group_size')}, so "
            f"nothing is selected (plain flow matching on every sample); bind top_k below the group size, e.g. "
            f"{v.name('top_k')} = 1")


@register("objectives", "best_of_n")
class BestOfNDistillation(MatchingObjective):
    """Best-of-N distillation: flow matching on each group's top_k rollouts by advantage."""

    CHECKS = Checks(
        [Relation(("top_k", "training.trial.group_size"), _top_k_selects), ORDER_ONLY],
        top_k=integer(1, example="1", note="rollouts kept per group"),
        weighting=one_of(*WEIGHTINGS),
    )

    def __init__(self, top_k: int = 1, weighting: str = "t", timesteps: int = 2,
                 timestep_range: tuple[float, float] = (0.0, 0.9), kl_beta: float = 0.0, shared_draws: bool = False):
        super().__init__(timesteps, timestep_range, kl_beta, shared_draws)
        self.top_k, self.weighting = top_k, weighting

    def units(self, rows: torch.Tensor, advantages: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
        """[U, 1] each group's top_k rollouts in rows[M] by advantage (`top_units`)."""
        return top_units(rows, advantages, groups, self.top_k)

    def policy_loss(self, terms, advantages, weights):
        error = -matching_log_prob(terms.velocity, terms.target, terms.sigma, terms.to_tokens, self.weighting)
        per_unit = credit_mean(error, weights.tokens())
        return per_unit.mean(), {"distill_error": per_unit.detach().mean()}


@register("objectives", "best_of_n_null")
class BestOfNDistillationNull(PermutedAdvantages, BestOfNDistillation):
    """The null control of best-of-N distillation: the step's advantages permuted within each group before the
    selection, so each group distils top_k of its rollouts drawn at random; nothing else changed."""
