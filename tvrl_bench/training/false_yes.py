"""The critic's false-yes rate: the share of asked checks the critic answers yes to and the exact evaluator no.

Over an evaluation's videos i and their checks k (the critic's score grid scores[B, K], mask[B, K] as
`training.scoring.Scores` holds it, and the evaluator's per-video records with each check's `passed`):

    false_yes = #{(i, k) asked: scores[i, k] > 0.5 and the evaluator says no} / #{(i, k) asked}

It is a share of all checks, not of the evaluator's no's, so it rises when training makes the policy draw what the
critic wrongly accepts (a hacked critic) and falls as the policy gets the checks right even under a lenient critic.
None where it cannot be read: a critic with one score per video instead of an answer per check (`uses_checks =
False`), or an evaluator whose records do not answer each check (VBench-2.0).
"""

from __future__ import annotations

from typing import Any

import torch

YES = 0.5  # an answer-likelihood critic says yes when P(yes) is above one half


def false_yes_counts(scores: torch.Tensor, mask: torch.Tensor,
                     records: list[dict[str, Any]]) -> tuple[int, int] | None:
    """(false yes, asked) over scores[B, K] / mask[B, K] against the B evaluator records of the same videos (see the
    module); None when a record has no per-check answers or their count differs from the critic's."""
    if len(records) != scores.shape[0]:
        return None
    yes, asked = scores.detach().cpu() > YES, mask.detach().cpu().bool()
    false, total = 0, 0
    for i, record in enumerate(records):
        checks = record.get("checks")
        if checks is None or len(checks) != int(asked[i].sum()):
            return None
        for k, check in enumerate(checks):
            false += int(bool(yes[i, k]) and not check["passed"])
            total += 1
    return false, total


def pooled_false_yes(counts: list[tuple[int, int] | None]) -> float | None:
    """The false-yes share over several batches' counts; None when one cannot be read or nothing was asked."""
    if any(c is None for c in counts):
        return None
    total = sum(c[1] for c in counts)
    return sum(c[0] for c in counts) / total if total else None


def false_yes_rate(scores: torch.Tensor, mask: torch.Tensor, records: list[dict[str, Any]]) -> float | None:
    """The false-yes share of one batch, scores[B, K] / mask[B, K] against its B records (None as above)."""
    return pooled_false_yes([false_yes_counts(scores, mask, records)])
