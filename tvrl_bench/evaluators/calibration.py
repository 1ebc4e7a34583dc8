"""Critic calibration against an exact evaluator: where the policy is, does the critic's "Yes" mean yes?

A critic gives RL a useful slope only where its scores move with what the evaluator measures. On rollouts of the
policy being trained, we count for each kind of check how often the critic's verdict (p(Yes) > 0.5, i.e. a
log-probability score above log 0.5) agrees with the evaluator's, and how often the score sits at the critic's
floor (where it has no slope).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class KindAgreement:
    """One check kind: pairs counted, the agreement rate, the rate of critic-yes and evaluator-yes, the floor rate."""

    kind: str
    pairs: int
    agreement: float
    critic_yes: float
    evaluator_yes: float
    at_floor: float


def agreement_by_kind(
    log_probs: list[float], passed: list[bool], kinds: list[str], floor: float | None = None, tolerance: float = 1e-3
) -> dict[str, KindAgreement]:
    """Per kind: how often log p(Yes) > log 0.5 equals the evaluator's verdict `passed` (one entry per pair).

    log_probs[P], passed[P], kinds[P] describe P (video, check) pairs; floor: the critic's lowest score, or None.
    """
    if not len(log_probs) == len(passed) == len(kinds):
        raise ValueError(f"need one score, verdict and kind per pair; got {len(log_probs)}, {len(passed)}, {len(kinds)}")
    groups: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for score, ok, kind in zip(log_probs, passed, kinds):
        groups[kind].append((float(score), bool(ok)))
    out = {}
    for kind, pairs in groups.items():
        says_yes = [score > math.log(0.5) for score, _ in pairs]
        truth = [ok for _, ok in pairs]
        n = len(pairs)
        out[kind] = KindAgreement(
            kind=kind,
            pairs=n,
            agreement=sum(a == b for a, b in zip(says_yes, truth)) / n,
            critic_yes=sum(says_yes) / n,
            evaluator_yes=sum(truth) / n,
            at_floor=0.0 if floor is None else sum(score <= floor + tolerance for score, _ in pairs) / n,
        )
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class GroupHeadroom:
    """Evaluator score of the rollout the critic ranks best in its group, the group mean, and the worst-ranked.

    best - mean bounds what a policy that always produced its group's critic-best rollout would gain: the most that
    group-relative RL can distill from this critic on these rollouts.
    """

    best: float
    mean: float
    worst: float
    groups: int


def best_of_group(evaluator_scores: list[float], rewards: list[float], group_size: int) -> GroupHeadroom:
    """Averages over groups of the evaluator score at the critic's argmax, the group mean, and at its argmin.

    evaluator_scores[B], rewards[B]: one per rollout, B = groups x group_size with each group's rollouts
    consecutive. Ties go to the first rollout.
    """
    if len(evaluator_scores) != len(rewards) or group_size < 1 or len(rewards) % group_size:
        raise ValueError(f"need B = groups x group_size scores and rewards; got {len(evaluator_scores)} and "
                         f"{len(rewards)} with group_size {group_size}")
    best = mean = worst = 0.0
    n = len(rewards) // group_size
    for g in range(n):
        e = evaluator_scores[g * group_size:(g + 1) * group_size]
        r = rewards[g * group_size:(g + 1) * group_size]
        best += e[max(range(group_size), key=r.__getitem__)]
        worst += e[min(range(group_size), key=r.__getitem__)]
        mean += sum(e) / group_size
    return GroupHeadroom(best / n, mean / n, worst / n, n)
