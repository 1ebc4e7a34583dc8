"""DiffusionNFT (Zheng et al. 2025), negative-aware fine-tuning on the forward process, with token credit.

The advantage becomes an optimality probability r = clip(A, -c, c) / (2c) + 1/2; an implicit positive policy
v+ = beta v + (1 - beta) v_old and a negative one v- = (1 + beta) v_old - beta v are fitted to the clean sample with
weights r and 1 - r, each squared clean-sample miss normalised by its mean absolute miss (`matching_losses.nft_loss`).
The old policy is the current one before the update (Flow-Factory's default, src/flow_factory/trainers/nft.py), or
with `old_decay` in (0, 1) a moving average of the parameters updated after every optimizer step (DiffusionNFT's
slowly moving old policy; the rollouts are still sampled by the current policy).
"""

from __future__ import annotations

from typing import Any

from tvrl_bench.config.rules import Checks, number, positive
from tvrl_bench.objectives.advantages import PermutedAdvantages
from tvrl_bench.objectives.matching import MatchingObjective
from tvrl_bench.objectives.matching_losses import nft_loss
from tvrl_bench.objectives.reference import MovingAverageReference
from tvrl_bench.registry import register


@register("objectives", "nft")
class NegativeAwareFineTuning(MatchingObjective):
    """DiffusionNFT: advantage-weighted fit of implicit positive and negative policies around an old policy."""

    CHECKS = Checks(
        beta=positive("1.0", note="the implicit policies' step"),
        advantage_clip=positive("5.0"),
        old_decay=number(0, 1, high_open=True, example="0.0", note="0: the current policy is the old one"),
    )

    def __init__(self, beta: float = 1.0, advantage_clip: float = 5.0, old_decay: float = 0.0, timesteps: int = 2,
                 timestep_range: tuple[float, float] = (0.0, 0.9), kl_beta: float = 0.0, shared_draws: bool = False):
        super().__init__(timesteps, timestep_range, kl_beta, shared_draws)
        self.beta, self.advantage_clip = beta, advantage_clip
        self.old = MovingAverageReference(old_decay) if old_decay > 0 else None

    def policy_loss(self, terms, advantages, weights):
        return nft_loss(terms.velocity, terms.velocity_old, terms.target, terms.sigma, advantages, weights.tokens(),
                        terms.to_tokens, self.beta, self.advantage_clip)

    def after_update(self, stats: dict[str, float]) -> None:
        if self.old is not None:
            self.old.after_update(0)

    def state_dict(self) -> dict[str, Any]:
        return {} if self.old is None else {"old": self.old.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.old is not None and "old" in state:
            self.old.load_state_dict(state["old"])


@register("objectives", "nft_null")
class NegativeAwareFineTuningNull(PermutedAdvantages, NegativeAwareFineTuning):
    """The null control of DiffusionNFT: its loss with the step's advantages randomly permuted (within each group
    by default), nothing else changed.

    NFT fits the rollouts' own clean samples, so it could raise the evaluator with no reward information at all
    (sharpening its own modes); this control measures what such fitting alone buys. `objectives.null` is the
    control of the transition objectives (GRPO, TVRL) and does not apply to a matching objective.
    """
