"""`combined`: several critics in one trial, with weights, and the credit map from a named one.

Each critic j scores every (video, check) pair on its own, giving check scores r_j[B, K] and rewards R_j[B] (the
mean over the prompt's checks); the trainer logs each critic's mean reward as `train/reward_<name>_mean`.

- `aggregate = 'sum'`: the check scores are the weighted sum r = sum_j w_j r_j, so the reward is
  R = sum_j w_j R_j, and the step's group advantages are the usual ones of R (`training.trial.advantage_std`,
  `advantage_eps`, `advantage_clip`).
- `aggregate = 'gdpo'` (GDPO, as in Flow-Factory's advantage processor): each critic's rewards are normalised
  within their group, a_j = (R_j - mean_g R_j) / max(std_g R_j, 1e-6), combined as A = sum_j w_j a_j, then
  whitened over the whole step, A = (A - mean A) / max(std A, 1e-6) (population stds), then clipped to
  `advantage_clip`; `advantage_std` and `advantage_eps` do not apply. The logged reward is still sum_j w_j R_j.

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

from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward

AGGREGATES = ("sum", "gdpo")
GDPO_EPS = 1e-6


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

    def __init__(self, critics: dict[str, Reward], weights: dict[str, float] | None = None, aggregate: str = "sum",
                 credit_from: str | None = None) -> None:
        """critics: {name: critic}; weights: {name: w} for every critic (default 1 each); aggregate: 'sum' or
        'gdpo'; credit_from: the critic whose gradients give the credit map (default: the one critic of non-zero
        weight; required when several have one)."""
        super().__init__()
        if not critics:
            raise ValueError("rewards.combined.critics is empty: give {name: @rewards.<critic>(), ...}")
        bad = [n for n, c in critics.items()
               if not isinstance(n, str) or not n or "." in n or not isinstance(c, Reward)]
        if bad:
            raise ValueError(f"rewards.combined.critics: {bad} must be names (no '.') of reward components "
                             "(@rewards.<name>())")
        weights = {name: 1.0 for name in critics} if weights is None else dict(weights)
        if set(weights) != set(critics):
            raise ValueError(f"rewards.combined.weights must name every critic exactly: critics {sorted(critics)}, "
                             f"weights {sorted(weights)}")
        if not all(math.isfinite(float(w)) for w in weights.values()) or not any(weights.values()):
            raise ValueError(f"rewards.combined.weights must be finite with at least one non-zero, got {weights}")
        if aggregate not in AGGREGATES:
            raise ValueError(f"rewards.combined.aggregate must be one of {AGGREGATES}, got {aggregate!r}")
        weighted = [name for name, w in weights.items() if w != 0]
        if credit_from is None:
            if len(weighted) != 1:
                raise ValueError(f"rewards.combined: critics {weighted} have non-zero weights; name the one that "
                                 "gives the credit map with rewards.combined.credit_from")
            credit_from = weighted[0]
        if credit_from not in critics:
            raise ValueError(f"rewards.combined.credit_from = {credit_from!r} is not one of the critics "
                             f"{sorted(critics)}")
        layouts = {(c.uses_checks, () if c.uses_checks else tuple(c.score_names)) for c in critics.values()}
        if len(layouts) > 1:
            raise ValueError("rewards.combined: the critics ask different questions (some a prompt's checks, some "
                             f"their own score heads: {sorted(layouts)}); combine critics that ask the same ones")
        self.members = nn.ModuleDict(critics)
        self.weights = {name: float(w) for name, w in weights.items()}
        self.aggregate, self.credit_from = aggregate, credit_from
        credit = critics[credit_from]
        self.uses_checks, self.score_names = credit.uses_checks, credit.score_names
        self.grad_spaces = credit.grad_spaces
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
