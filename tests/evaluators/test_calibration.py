"""Critic calibration per check kind against a hand-counted case."""

from __future__ import annotations

import math

import pytest

from tvrl_bench.evaluators.calibration import agreement_by_kind


def test_agreement_per_kind_against_a_hand_made_case():
    floor = math.log(1e-4)
    yes, no = math.log(0.9), math.log(0.1)
    log_probs = [yes, no, floor, yes, yes, no, math.log(0.5)]
    passed = [True, False, True, False, True, True, False]
    kinds = ["object", "object", "object", "object", "motion", "motion", "motion"]
    table = agreement_by_kind(log_probs, passed, kinds, floor=floor)
    # object: agree, agree, disagree (floor but passed), disagree (yes but failed) -> 2/4
    assert table["object"].agreement == pytest.approx(0.5) and table["object"].pairs == 4
    assert table["object"].at_floor == pytest.approx(0.25) and table["object"].critic_yes == pytest.approx(0.5)
    # motion: agree, disagree, agree (p = 0.5 is not a yes) -> 2/3
    assert table["motion"].agreement == pytest.approx(2 / 3) and table["motion"].evaluator_yes == pytest.approx(2 / 3)
    assert list(table) == ["motion", "object"]


def test_mismatched_lengths_are_a_clear_error():
    with pytest.raises(ValueError, match="one score, verdict and kind per pair"):
        agreement_by_kind([0.0], [True, False], ["object"])


def test_best_of_group_against_a_hand_made_case():
    from tvrl_bench.evaluators.calibration import best_of_group

    evaluator = [0.2, 0.8, 0.5, 0.1, 1.0, 0.0]
    rewards = [0.3, 0.9, 0.1, 0.5, 0.2, 0.7]  # critic-best / critic-worst: group 1 0.8 / 0.5, group 2 0.0 / 1.0
    h = best_of_group(evaluator, rewards, 3)
    assert h.groups == 2
    assert h.best == pytest.approx((0.8 + 0.0) / 2) and h.worst == pytest.approx((0.5 + 1.0) / 2)
    assert h.mean == pytest.approx((0.5 + 1.1 / 3) / 2)
    with pytest.raises(ValueError, match="groups x group_size"):
        best_of_group(evaluator, rewards, 4)
