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
