"""The group-sequential permutation test: the recorded credit study replayed, its error rate on simulated studies,
and the adastop package (the reference implementation) on the same data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvrl_bench.decisions.sequential import Comparison, least_seeds_per_stage, staged_test
from tvrl_bench.decisions.simulation import simulate

# wide_eval/overall x 100 of the credit study's seeds 0-4 (docs/results.md), stage 1 of a staged credit study.
CREDIT = {
    "uniform": [87.62, 85.46, 74.76, 87.90, 86.46],
    "frame": [89.58, 86.30, 77.16, 88.14, 83.55],
    "frame_difference": [89.18, 82.87, 72.96, 84.50, 86.02],
    "window7": [92.69, 92.21, 89.90, 91.93, 90.81],
    "window3": [92.81, 91.85, 92.65, 92.21, 91.01],
    "window1": [90.54, 88.10, 88.22, 89.06, 89.26],
    "located": [94.69, 92.61, 90.18, 93.73, 90.34],
    "shuffled3": [63.26, 68.57, 63.42, 79.63, 72.52],
}
ROUTERS = [Comparison(arm, "uniform") for arm in CREDIT if arm != "uniform"]


def verdicts(result) -> dict[str, str]:
    return {v.comparison.arm: v.verdict for v in result.verdicts}


def test_the_recorded_credit_study_decides_located_window3_and_shuffled_at_the_first_stage():
    (stage1,) = staged_test({arm: [v] for arm, v in CREDIT.items()}, ROUTERS, alpha=0.05, max_stages=3)
    decided = verdicts(stage1)
    assert decided["located"] == "larger" and decided["window3"] == "larger" and decided["shuffled3"] == "smaller"
    assert {decided[a] for a in ("frame", "frame_difference", "window1", "window7")} == {"open"}
    located = next(v for v in stage1.verdicts if v.comparison.arm == "located")
    assert located.difference == pytest.approx(np.mean(CREDIT["located"]) - np.mean(CREDIT["uniform"]))
    assert (located.stage, located.n_arm, located.n_baseline) == (1, 5, 5)
    assert {c.arm for c in stage1.open} == {"frame", "frame_difference", "window1", "window7"}
    assert 0 < stage1.spent <= 0.05 / 3


def test_a_rerun_reaches_the_same_decisions_and_boundaries():
    values = {arm: [v] for arm, v in CREDIT.items()}
    first = staged_test(values, ROUTERS, 0.05, 3)
    again = staged_test(values, ROUTERS, 0.05, 3)
    assert [(v.verdict, v.boundary) for v in first[0].verdicts] == [(v.verdict, v.boundary) for v in again[0].verdicts]


def test_open_arms_become_undecided_after_the_last_stage_and_a_decided_arm_ignores_later_values():
    rng = np.random.default_rng(3)
    values = {"base": [list(rng.normal(0, 1, 5)) for _ in range(2)],
              "far": [list(rng.normal(30, 1, 5)), [1e9] * 5],  # decided at stage 1: stage 2's values never count
              "same": [list(rng.normal(0, 1, 5)) for _ in range(2)]}
    results = staged_test(values, [Comparison("far", "base"), Comparison("same", "base")], 0.05, 2)
    assert [r.stage for r in results] == [1, 2]
    assert verdicts(results[0]) == {"far": "larger", "same": "open"}
    assert verdicts(results[1]) == {"far": "larger", "same": "undecided"}
    far = next(v for v in results[1].verdicts if v.comparison.arm == "far")
    assert far.stage == 1 and far.difference < 40


def test_an_interval_inside_the_margin_is_decided_within():
    values = {"base": [[50.0, 50.2, 49.9, 50.1, 49.8]], "twin": [[50.1, 49.9, 50.0, 50.2, 49.9]]}
    (result,) = staged_test(values, [Comparison("twin", "base")], 0.05, 1, margin=3.0)
    assert verdicts(result) == {"twin": "within"}
    (wide,) = staged_test(values, [Comparison("twin", "base")], 0.05, 1, margin=0.1)
    assert verdicts(wide) == {"twin": "undecided"}


@pytest.mark.parametrize("alpha,stages,least", [(0.05, 3, 5), (0.05, 1, 4), (0.05, 5, 5), (0.01, 3, 6), (0.01, 5, 7), (0.4, 2, 3)])
def test_the_least_seeds_per_stage_is_the_first_that_can_reach_the_first_stages_level(alpha, stages, least):
    assert least_seeds_per_stage(alpha, stages) == least
    assert 2 / math.comb(2 * least, least) <= alpha / stages < 2 / math.comb(2 * least - 2, least - 1)


def test_no_stage_can_decide_with_fewer_seeds_than_the_least():
    values = {"base": [[0.0, 0.1, 0.2, 0.3]], "far": [[100.0, 100.1, 100.2, 100.3]]}  # 4 seeds: 2/70 > 0.05/3
    (result,) = staged_test(values, [Comparison("far", "base")], 0.05, 3)
    assert verdicts(result) == {"far": "open"}


@pytest.mark.parametrize("tails", ["normal", "heavy"])
def test_false_decisions_on_equal_arms_stay_at_or_below_the_rate(tails):
    """1,000 simulated credit-like studies (7 arms equal to the baseline, seed spread 4.1 points plus a shared seed
    effect of 2, up to 3 stages of 5 seeds): the family-wise error's 95% upper bound is at most 0.05."""
    result = simulate([0.0] * 7, sd=4.1, seed_sd=2.0, tails=tails, studies=1000, permutations=500, seed=1)
    low, high = result.family_error_interval()
    assert result.family_error <= 0.05 and high <= 0.06, (result.family_error, low, high)
    assert result.mean_trials == pytest.approx(result.grid_trials, rel=0.02)  # equal arms run every stage


def test_a_strong_arm_stops_early_and_saves_trials_while_equal_arms_keep_their_rate():
    result = simulate([0.0, 0.0, 0.0, 15.0], sd=4.1, seed_sd=2.0, studies=300, permutations=500, seed=2)
    assert result.rates["larger"][3] > 0.95
    assert result.family_error <= 0.05
    assert result.mean_trials < result.grid_trials - 8  # most of the strong arm's stages 2 and 3 are saved


def test_the_reference_adastop_decides_the_same_arms_at_the_same_two_sided_level():
    """adastop 0.1.3 compares the largest signed permuted difference with |T|, a one-sided tail: its alpha is our
    two-sided alpha / 2 (at its own alpha its simulated error rate doubles). On the credit study both decide the
    same arms at the first of 3 stages."""
    adastop = pytest.importorskip("adastop")
    names = list(CREDIT)
    comparator = adastop.MultipleAgentsComparator(
        n=5, K=3, B=10_000, comparisons=np.array([(0, i) for i in range(1, len(names))]), alpha=0.025, seed=0)
    comparator.partial_compare({n: np.array(v) for n, v in CREDIT.items()}, verbose=False)
    theirs = {names[int(c.strip("[]").split()[1])]: d for c, d in comparator.decisions.items()}
    # adastop orients a comparison (0, i) as uniform - arm: its "smaller" is our "larger"
    flip = {"smaller": "larger", "larger": "smaller", "continue": "open"}
    (ours,) = staged_test({arm: [v] for arm, v in CREDIT.items()}, ROUTERS, 0.05, 3)
    assert {arm: flip[d] for arm, d in theirs.items()} == verdicts(ours)
