"""`combined`: several critics in one trial, with weights, and the credit map from a named one.

Each critic j scores every (video, check) pair on its own, giving check scores r_j[B, K] and rewards R_j[B] (the
mean over the prompt's checks); the trainer logs each critic's mean reward as `train/reward_<name>_mean`.

- `aggregate = 'sum'`: the check scores are the weighted sum r = sum_j w_j r_j, so the reward is
  R = sum_j w_j R_j, and the step's group advantages are the usual ones of R (`training.trial.advantage_std`,
  `advantage_eps`, `advantage_clip`).
- `aggregate = 'gdpo'` (GDPO, as in Flow-Factory's advantage processor): each critic's rewards are normalised
  within their group, a_j = (R_j - mean_g R_j) / max(std_g R_j, 1e-6), combined as A = sum_j w_j a_j, then
  whitened over the whole step, A = (A - mean A) / max(std A, 1e-6) (population stds), then clipped to
  `advantage_clip`; `advantage_std` and `advantage_eps` do not apply (set to another value, they are refused). The logged reward is still sum_j w_j R_j.

The credit map (the gradients the credit router turns into token weights) is the critic `credit_from`'s only,
and only it is asked for gradients, so a non-differentiable critic (`toy_verdicts`) can give the reward while a
differentiable one routes the credit. A critic of weight 0 gives no reward (it is scored and logged only), and may
still be the credit critic. Every critic must ask the same questions (all of them a prompt's checks, or all the
same score heads), so their [B, K] scores line up.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.rules import Checks, Relation, Rule, Values, one_of
from tvrl_bench.config.takes_effect import takes_effect_when
from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward

AGGREGATES = ("sum", "gdpo")


def _named_critics(value: object) -> bool:
    return isinstance(value, dict) and bool(value) and all(isinstance(n, str) and n and "." not in n for n in value)


def _critics_example(value: object) -> str:
    """A valid `critics` in the config's own names: its critics kept, each name without '.' (or the usual two)."""
    if not isinstance(value, dict) or not value:
        return "{'oracle': @rewards.toy_oracle(), 'learned': @rewards.toy_learned()}"
    names = [(str(n).replace(".", "_") or f"critic{i}") for i, n in enumerate(value)]
    return "{" + ", ".join(f"'{n}': {c!r}" for n, c in zip(names, value.values())) + "}"


def _weights_example(value: object) -> str:
    """A valid `weights` in the config's own names: each critic it names weighted 1.0 (else None: 1 each)."""
    if isinstance(value, dict) and value and all(isinstance(n, str) for n in value):
        return "{" + ", ".join(f"'{n}': 1.0" for n in value) + "}"
    return "None"


def _finite_weights(value: object) -> bool:
    if value is None:
        return True
    numbers = list(value.values()) if isinstance(value, dict) else []
    return (bool(numbers) and all(isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w)
                                  for w in numbers) and any(w != 0 for w in numbers))


def _weights_name_every_critic(v: Values) -> str | None:
    critics, weights = sorted(v["critics"]), v["weights"]
    if weights is None or sorted(weights) == critics:
        return None
    missing, extra = sorted(set(critics) - set(weights)), sorted(set(weights) - set(critics))
    said = "; ".join(s for s in (f"no weight for {missing}" if missing else "",
                                 f"{extra} name no critic" if extra else "") if s)
    example = ", ".join(f"'{name}': 1.0" for name in critics)
    return (f"{v.name('weights')} must give every critic of {v.name('critics')} ({', '.join(critics)}) a weight and "
            f"nothing else ({said}), e.g. {v.name('weights')} = {{{example}}}")


def _credit_critic(v: Values) -> str | None:
    critics, weights, credit_from = sorted(v["critics"]), v["weights"], v["credit_from"]
    if weights is not None and sorted(weights) != critics:
        return None  # _weights_name_every_critic says so
    weighted = critics if weights is None else [n for n in critics if weights.get(n, 0) != 0]
    if credit_from is None:
        if len(weighted) == 1:
            return None
        return (f"{v.name('credit_from')} is not bound and critics {weighted} have non-zero weights; name the one "
                f"whose gradients give the credit map, e.g. {v.name('credit_from')} = '{weighted[0]}'")
    if credit_from in critics:
        return None
    return (f"{v.binding('credit_from')} is not one of the critics ({', '.join(critics)}); name one of them, e.g. "
            f"{v.name('credit_from')} = '{weighted[0] if weighted else critics[0]}'")
GDPO_EPS = 1e-6


def _gdpo_normalises_itself(v: Values):
    if v["aggregate"] != "gdpo":
        return None
    return (f"{v.binding('aggregate')} normalises each critic's rewards with its own population std floored at "
            f"{GDPO_EPS:g}", f"set {v.name('aggregate')} = 'sum'")


def gdpo_advantages(rewards: dict[str, torch.Tensor], weights: dict[str, float], groups: torch.Tensor,
                    clip: float | None = None, eps: float = GDPO_EPS) -> torch.Tensor:
    """GDPO advantages [B] from each critic's rewards {name: R_j[B]}, their weights and the group ids[B]: the
    weighted sum of per-critic group-normalised rewards, whitened over the batch, optionally clipped."""
    total = torch.zeros(len(groups), dtype=torch.float32)
    for name, weight in weights.items():
        if weight == 0:
            continue
        r = rewards[name].to(torch.float32).cpu()
        normalised = torch.empty_like(r)
        for group in torch.unique(groups):
            members = groups == group
            centred = r[members] - r[members].mean()
            normalised[members] = centred / centred.pow(2).mean().sqrt().clamp_min(eps)
        total = total + weight * normalised
    centred = total - total.mean()
    advantages = centred / centred.pow(2).mean().sqrt().clamp_min(eps)
    return advantages if clip is None else advantages.clamp(-clip, clip)


@register("rewards", "combined")
class CombinedReward(Reward):
    """Weighted critics: a weighted sum of rewards or of per-critic group advantages (GDPO); credit from a named one.
    """

    score_space = "score"

    CHECKS = Checks(
        [Relation(("weights", "critics"), _weights_name_every_critic),
         Relation(("credit_from", "critics", "weights"), _credit_critic),
         takes_effect_when(("training.trial.advantage_std", "training.trial.advantage_eps"), ("aggregate",),
                           _gdpo_normalises_itself)],
        critics=Rule(_named_critics, "a non-empty dict {name: @rewards.<critic>()} whose names have no '.'",
                     _critics_example),
        weights=Rule(_finite_weights, "None (1 each) or a dict {critic: weight} of finite numbers, one non-zero "
                     "at least", _weights_example),
        aggregate=one_of(*AGGREGATES),
    )

    def __init__(self, critics: dict[str, Reward], weights: dict[str, float] | None = None, aggregate: str = "sum",
                 credit_from: str | None = None) -> None:
        """critics: {name: critic}; weights: {name: w} for every critic (default 1 each); aggregate: 'sum' or
        'gdpo'; credit_from: the critic whose gradients give the credit map (default: the one critic of non-zero
        weight; required when several have one)."""
        super().__init__()  # names, weights, aggregate and credit_from: CHECKS, when the config is read
        bad = sorted(n for n, c in critics.items() if not isinstance(c, Reward))
        if bad:
            raise ConfigError(f"rewards.combined.critics: {bad} must be reward components (@rewards.<name>())")
        weights = {name: 1.0 for name in critics} if weights is None else dict(weights)
        weighted = [name for name, w in weights.items() if w != 0]
        credit_from = weighted[0] if credit_from is None else credit_from
        layouts = {(c.uses_checks, () if c.uses_checks else tuple(c.score_names)) for c in critics.values()}
        if len(layouts) > 1:
            raise ConfigError("rewards.combined: the critics ask different questions (some a prompt's checks, some "
                             f"their own score heads: {sorted(layouts)}); combine critics that ask the same ones")
        self.members = nn.ModuleDict(critics)
        self.weights = {name: float(w) for name, w in weights.items()}
        self.aggregate, self.credit_from = aggregate, credit_from
        credit = critics[credit_from]
        self.uses_checks, self.score_names = credit.uses_checks, credit.score_names
        self.grad_spaces = credit.grad_spaces
        # A weighted mean of yes-probabilities (every weighted critic scores p(Yes), weights summing to 1) is one too.
        summed = sum(w for w in self.weights.values() if w != 0)
        if all(critics[n].score_space == "prob" for n in weighted) and abs(summed - 1.0) < 1e-9:
            self.score_space = "prob"
        self.freeze()

    def critics(self) -> dict[str, Reward]:
        return dict(self.members.items())

    def sampled_frames(self, num_frames: int) -> list[int] | None:
        return self.members[self.credit_from].sampled_frames(num_frames)

    def combine(self, scores: dict[str, torch.Tensor]) -> torch.Tensor:
        """sum_j w_j scores_j over the critics of non-zero weight."""
        terms = [w * scores[name] for name, w in self.weights.items() if w != 0]
        return torch.stack(terms).sum(0)

    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """sum_j w_j r_j [P] (differentiable where every weighted critic is)."""
        return self.combine({name: self.members[name].score_pairs(videos, prompts, questions)
                             for name, w in self.weights.items() if w != 0})

    def group_advantages(self, rewards: torch.Tensor, by_critic: dict[str, torch.Tensor], groups: torch.Tensor,
                         std_mode: str, eps: float, clip: float | None) -> torch.Tensor:
        if self.aggregate == "sum":
            return super().group_advantages(rewards, by_critic, groups, std_mode, eps, clip)
        return gdpo_advantages(by_critic, self.weights, groups, clip)
