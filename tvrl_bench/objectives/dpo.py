"""Flow-DPO (Diffusion-DPO on flow matching; Wallace et al. 2024) on online pairs, with token credit.

Each group's best and worst rollout (by advantage; a group whose advantages are all equal gives no pair) are noised
with the same noise at the same level; with credit-weighted squared velocity errors E of the policy and of the
frozen pretrained reference, loss = -mean log sigmoid(-beta / 2 ((E_w - E_ref,w) - (E_l - E_ref,l)))
(`matching_losses.dpo_loss`; Flow-Factory's src/flow_factory/trainers/dpo.py, beta 2000 there). Each rollout's
errors are weighted by its own credit map.
"""

from __future__ import annotations

import torch

from tvrl_bench.objectives.matching import ORDER_ONLY, MatchingObjective, groups_with_a_preference
from tvrl_bench.config.rules import Checks, positive
from tvrl_bench.objectives.matching_losses import dpo_loss, velocity_error
from tvrl_bench.objectives.reference import PretrainedReference
from tvrl_bench.registry import register


@register("objectives", "dpo")
class FlowDPO(MatchingObjective):
    """Flow-DPO: each group's best vs worst rollout against the frozen pretrained policy."""

    pair_size = 2

    CHECKS = Checks([ORDER_ONLY], beta=positive("2000.0", note="the preference's inverse temperature"))

    def __init__(self, beta: float = 2000.0, timesteps: int = 2, timestep_range: tuple[float, float] = (0.0, 0.9)):
        super().__init__(timesteps, timestep_range)
        self.beta = beta
        self.reference = PretrainedReference()

    def units(self, rows: torch.Tensor, advantages: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
        """[P, 2] (best, worst) rows of each group present in rows[M] whose advantages differ."""
        pairs = []
        for members in groups_with_a_preference(groups, advantages):
            values = advantages[members]
            pairs.append(torch.stack([rows[members[values.argmax()]], rows[members[values.argmin()]]]))
        return torch.stack(pairs) if pairs else rows.new_zeros((0, 2))

    def policy_loss(self, terms, advantages, weights):
        w = weights.tokens()
        error = velocity_error(terms.velocity, terms.target, w, terms.to_tokens)
        error_ref = velocity_error(terms.velocity_ref, terms.target, w, terms.to_tokens)
        return dpo_loss(error[0::2], error[1::2], error_ref[0::2], error_ref[1::2], self.beta)
