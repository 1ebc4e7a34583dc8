"""Per-step diagnostics of the learning signal: is there reward spread to learn from, and where does it come from.

- `train/group_reward_std`: the mean over groups of the within-group reward std (what advantages are made of);
- `train/zero_std_groups`: the fraction of groups whose rollouts all got the same reward (advantage 0: no signal);
- `train/floor_fraction`: the fraction of check scores at the critic's floor (no slope there), for critics that
  declare one (`Reward.floor_score`);
- `train/reward/<kind>`: the mean score of each kind of toy check (object, colour, shape, motion, background,
  count), so a run that buys one kind and loses another shows it; on the slot world, where every check is of kind
  `slot`, one row per slot instead, `train/reward/slot:<name>` (`slot:top left`), so a run that buys one slot and
  loses another shows it too. Checks that are not toy-world checks (free text for the real critics) are left out.
"""

from __future__ import annotations

import torch

from tvrl_bench.world.checks import check_row


def group_spread(rewards: torch.Tensor, group_ids: torch.Tensor, tolerance: float = 1e-6) -> dict[str, float]:
    """{'train/group_reward_std', 'train/zero_std_groups'} for rewards[B] and their group ids[B]."""
    stds = []
    for g in torch.unique(group_ids):
        stds.append(rewards[group_ids == g].to(torch.float64).std(unbiased=False))
    std = torch.stack(stds)  # [G]: one reward std per group
    return {"train/group_reward_std": float(std.mean()), "train/zero_std_groups": float((std <= tolerance).double().mean())}


def floor_fraction(scores: torch.Tensor, mask: torch.Tensor, floor: float, tolerance: float = 1e-3) -> float:
    """The fraction of the masked scores[B, K] within `tolerance` of the critic's floor score."""
    at_floor = (scores <= floor + tolerance) & mask  # [B, K]
    return float(at_floor.sum()) / max(int(mask.sum()), 1)


def reward_per_kind(scores: torch.Tensor, checks: list[list[str]]) -> dict[str, float]:
    """{'train/reward/<row>': mean score} over the checks[B][k] (scores[B, K]) that are toy-world checks, one row
    per check kind, per slot on the slot world (check_row)."""
    sums: dict[str, list[float]] = {}
    for i, row in enumerate(checks):
        for k, question in enumerate(row):
            name = check_row(question)
            if name is not None:
                sums.setdefault(name, []).append(float(scores[i, k]))
    return {f"train/reward/{name}": sum(v) / len(v) for name, v in sorted(sums.items())}
