"""The official TVRL objective: per-check ratios or a merged map, per-question advantages, moving/stepwise KL.

loss = policy_loss + c * (moving_weight * KL_moving + stepwise_weight * KL_stepwise)

- mode "video_adv" (official default): per-check weights [B, K, N], one clipped ratio per check with the video's
  advantage, averaged over the video's checks (`per_check.per_check_ratio_loss`); "question": the same ratios with
  per-question advantages A[B, K] (`per_check.question_advantages`); "merged_gradient": one merged map [B, N],
  the loss of `objectives.grpo` (what this repository did before).
- kl "moving_stepwise": KL_moving = mean (mu - mu_ref)^2 / (2 sigma^2) against a reference reloaded from the policy
  every `refresh_every` optimizer steps (`reference.RefreshedReference`); KL_stepwise = mean(logp_old - logp_new);
  c from `AdaptiveKLCoefficient`. kl "none": no KL term (no reference).
- a setting the mode leaves unused is refused (config/takes_effect.py): a KL setting under kl "none", this
  objective's advantage_eps / advantage_clip outside mode "question", and the trial's advantage_std / _eps / _clip
  in mode "question" (its per-check advantages use this objective's own).

Its parts of the Objective contract (base.py): `credit_layout` and `advantages` follow the mode, `reference` the
KL, `after_update` steps the coefficient and the reference's refresh, `state_dict` / `load_state_dict` keep both.
"""

from __future__ import annotations

from typing import Any

import torch

from tvrl_bench.credit.weights import MERGED, PER_CHECK
from tvrl_bench.objectives.advantages import PermutedAdvantages
from tvrl_bench.objectives.base import Objective
from tvrl_bench.config.rules import Checks, Relation, Values, integer, number, one_of, positive
from tvrl_bench.config.takes_effect import takes_effect_when
from tvrl_bench.objectives.kl import AdaptiveKLCoefficient, stepwise_kl
from tvrl_bench.objectives.losses import credit_weighted_grpo_loss
from tvrl_bench.objectives.per_check import per_check_ratio_loss, question_advantages
from tvrl_bench.objectives.reference import RefreshedReference
from tvrl_bench.objectives.step_rewards import StepRewards
from tvrl_bench.registry import register

MODES = ("video_adv", "question", "merged_gradient")
KL_MODES = ("none", "moving_stepwise")


def _kl_coefficients_ordered(v: Values) -> str | None:
    low, target, high = v["kl_min_coef"], v["kl_target"], v["kl_max_coef"]
    if 0 < low <= target <= high:
        return None
    return (f"{v.binding('kl_min_coef')}, {v.binding('kl_target')} and {v.binding('kl_max_coef')} must satisfy "
            f"0 < kl_min_coef <= kl_target <= kl_max_coef (the KL coefficient ramps from the first to the second and "
            f"stays below the third), e.g. the official 1e-7, 1e-5, 1e-5")


# The KL term's settings: under kl = 'none' there is no KL term, so another value than the default changes nothing.
KL_SETTINGS = ("moving_weight", "stepwise_weight", "kl_min_coef", "kl_target", "kl_max_coef", "kl_ramp_steps",
               "kl_window", "refresh_every")
# The trial's group advantages, which mode 'question' replaces by its own per-check ones.
TRIAL_ADVANTAGES = ("training.trial.advantage_std", "training.trial.advantage_eps", "training.trial.advantage_clip")


def _no_kl_term(v: Values):
    if v["kl"] != "none":
        return None
    return f"{v.binding('kl')} has no KL term", f"set {v.name('kl')} = 'moving_stepwise'"


def _video_advantages(v: Values):
    if v["mode"] == "question":
        return None
    return (f"{v.binding('mode')} takes the trial's advantages (training.trial.advantage_std, advantage_eps, "
            "advantage_clip); only mode 'question' computes per-check ones with it",
            lambda name: f"bind training.trial.{name} instead, or set {v.name('mode')} = 'question'")


def _per_check_advantages(v: Values):
    if v["mode"] != "question":
        return None

    def fix(name: str) -> str:
        own = name.rsplit(".", 1)[1]
        if own == "advantage_std":
            return f"set {v.name('mode')} = 'video_adv' (per-check advantages divide by each check's population std)"
        return f"bind {v.name(own)} instead"

    return (f"{v.binding('mode')} computes per-check advantages with its own std floor and clip "
            f"({v.name('advantage_eps')}, {v.name('advantage_clip')}), never the trial's", fix)


@register("objectives", "tvrl_official")
class OfficialTVRL(Objective):
    """Official TVRL loss: per-check clipped ratios (video or per-question advantages) + moving/stepwise adaptive KL."""

    CHECKS = Checks(
        [Relation(("kl_min_coef", "kl_target", "kl_max_coef"), _kl_coefficients_ordered),
         takes_effect_when(KL_SETTINGS, ("kl",), _no_kl_term),
         takes_effect_when(("advantage_eps", "advantage_clip"), ("mode",), _video_advantages),
         takes_effect_when(TRIAL_ADVANTAGES, ("mode",), _per_check_advantages)],
        mode=one_of(*MODES),
        kl=one_of(*KL_MODES),
        moving_weight=number(0, example="1.0"),
        stepwise_weight=number(0, example="0.1"),
        kl_min_coef=positive("1e-7"),
        kl_target=positive("1e-5"),
        kl_max_coef=positive("1e-5"),
        kl_ramp_steps=integer(0, example="100"),
        kl_window=integer(1, example="10"),
        refresh_every=integer(1, example="10", note="optimizer steps between reloads of the KL reference"),
        advantage_eps=positive("1e-6", note="the std floor: a check every rollout of a group scores alike has std 0"),
        advantage_clip=positive("5.0"),
    )

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
        super().__init__(clip_range)
        self.mode, self.kl = mode, kl
        self.moving_weight, self.stepwise_weight = moving_weight, stepwise_weight
        self.controller = AdaptiveKLCoefficient(kl_min_coef, kl_target, kl_max_coef, kl_ramp_steps, kl_window)
        self.reference = RefreshedReference(refresh_every) if kl != "none" else None
        self.advantage_eps, self.advantage_clip = advantage_eps, advantage_clip
        self.updates = 0

    @staticmethod
    def reads_check_scores(values: dict[str, Any]) -> str | None:
        if values.get("mode") != "question":
            return None
        return "mode = 'question' computes one advantage per check from the critic's answer to each check"

    # -- what the trainer calls ---------------------------------------------------------------------------------
    @property
    def credit_layout(self) -> str:
        return MERGED if self.mode == "merged_gradient" else PER_CHECK

    def advantages(self, step: StepRewards) -> torch.Tensor:
        """Mode "question": A[B, K] per question (population std floored at advantage_eps, clipped); otherwise
        the video's advantages[B] unchanged."""
        if self.mode != "question":
            return step.advantages
        scores, mask = step.check_scores()
        return question_advantages(scores, step.groups, mask, self.advantage_eps, self.advantage_clip)

    def after_update(self, stats: dict[str, float]) -> None:
        """One optimizer step done: update the KL coefficient from the step's KL, refresh the reference if due."""
        self.updates += 1
        if self.reference is None:
            return
        self.controller.update(stats.get("kl", 0.0))
        self.reference.after_update(self.updates)

    def state_dict(self) -> dict:
        state: dict[str, Any] = {"updates": self.updates, "controller": self.controller.state_dict()}
        reference = self.reference.state_dict() if self.reference is not None else {}
        if reference:  # the snapshot, once bound
            state["moving"] = reference
        return state

    def load_state_dict(self, state: dict) -> None:
        self.updates = int(state.get("updates", 0))
        if "controller" in state:
            self.controller.load_state_dict(state["controller"])
        if self.reference is not None and "moving" in state:
            self.reference.load_state_dict(state["moving"])

    # -- the loss -----------------------------------------------------------------------------------------------
    def policy_loss(self, logp_new, logp_old, advantages, weights):
        if self.mode == "merged_gradient":
            return credit_weighted_grpo_loss(logp_new, logp_old, advantages, weights.tokens(), self.clip_range)
        checks, mask = weights.by_check()
        return per_check_ratio_loss(logp_new, logp_old, advantages, checks, mask, self.clip_range)

    def loss(self, logp_new, logp_old, advantages, weights, kl=None):
        loss, stats = self.policy_loss(logp_new, logp_old, advantages, weights)
        stats = {**stats, "policy_loss": loss.detach()}
        if self.reference is None:
            return loss, stats
        if kl is None:
            raise ValueError("objectives.tvrl_official: the KL term needs the reference's transition mean")
        stepwise = stepwise_kl(logp_old, logp_new)
        combined = self.moving_weight * kl.mean() + self.stepwise_weight * stepwise.mean()
        coef = self.controller.coef
        stats.update(kl=combined.detach(), kl_moving=kl.detach().mean(), kl_stepwise=stepwise.detach().mean(),
                     kl_coef=torch.tensor(coef))
        return loss + coef * combined, stats


@register("objectives", "tvrl_official_null")
class OfficialTVRLNull(PermutedAdvantages, OfficialTVRL):
    """The null control of the official TVRL loss: its loss, maps and mode with each rollout's advantages (its row of
    per-question advantages in mode 'question') given to another rollout of its group; method label `null`."""
