"""The inversion rate: how often a critic orders two rollouts of one prompt the other way from the exact evaluator.

GRPO (and TVRL) read a critic only through the order it puts a prompt's rollouts in, so a critic that *prefers* a
wrong rollout to a right one points the policy the wrong way; one that merely accepts wrong rollouts (lenient) or
is noisy (weak) does not. Over the pairs (i, j) of one group whose evaluator targets differ, with i the better:

    inversion rate = #{pairs with score_j > score_i} / #{pairs with target_i > target_j}

Ties in the critic's score count as not inverted (a critic that cannot tell the two apart gives GRPO no direction,
right or wrong). NaN where the evaluator orders no pair. Above one half on some checks predicts that RL exploits the
critic there; an accurate critic stays near 0.

- `pair_counts(score, target, group, keep, worse)`: (inverted, ordered) over score[B] and target[B], B = groups x
  `group` consecutive rollouts of one prompt each; `keep[B]` drops rollouts (a check a prompt does not ask), and
  `worse[B]` keeps only the pairs whose worse rollout has it set (e.g. it shows a colour a critic's bias prefers).
- `inversion_rate(...)`: the same arguments, the share.
- `pooled_rate(counts)`: the share over several (inverted, ordered) counts (e.g. one per check index).
"""

from __future__ import annotations

import math

import torch


def pair_counts(score: torch.Tensor, target: torch.Tensor, group: int, keep: torch.Tensor | None = None,
                worse: torch.Tensor | None = None) -> tuple[int, int]:
    """(inverted, ordered) pairs of score[B] against target[B] within each run of `group` rows (see the module)."""
    if group < 1 or score.shape[0] % group:
        raise ValueError(f"{score.shape[0]} rows do not split into groups of {group}")
    s, t = score.detach().float().cpu().reshape(-1, group), target.detach().float().cpu().reshape(-1, group)
    k = torch.ones_like(s, dtype=torch.bool) if keep is None else keep.cpu().bool().reshape(-1, group)
    w = torch.ones_like(s, dtype=torch.bool) if worse is None else worse.cpu().bool().reshape(-1, group)
    # [G, i, j]: pairs where rollout i is better than rollout j by the evaluator
    ordered = (t[:, :, None] > t[:, None, :]) & k[:, :, None] & k[:, None, :] & w[:, None, :]
    inverted = ordered & (s[:, None, :] > s[:, :, None])
    return int(inverted.sum()), int(ordered.sum())


def inversion_rate(score: torch.Tensor, target: torch.Tensor, group: int, keep: torch.Tensor | None = None,
                   worse: torch.Tensor | None = None) -> float:
    """The share of evaluator-ordered pairs the critic orders the other way (NaN without such pairs)."""
    return pooled_rate([pair_counts(score, target, group, keep, worse)])


def pooled_rate(counts: list[tuple[int, int]]) -> float:
    """sum(inverted) / sum(ordered) over (inverted, ordered) counts; NaN when nothing is ordered."""
    inverted, ordered = sum(c[0] for c in counts), sum(c[1] for c in counts)
    return inverted / ordered if ordered else math.nan
