"""Probability of improvement and IQM (tvrl_bench.report.improvement) against hand computations on fixed numbers,
the exact distributions of both bootstraps (stratified; whole runs and tasks) on tiny cases, and
scipy.stats.bootstrap where one task makes either the ordinary one."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy import stats as sps

from tvrl_bench.report.stats.improvement import (improvement_replicates, iqm, iqm_replicates, iqm_value,
                                                 probability_of_improvement, probability_of_improvement_value)

# two runs (rows) x two tasks (columns)
X = [[3.0, 1.0], [2.0, 2.0]]
Y = [[2.0, 1.0], [1.0, 3.0]]


def test_probability_of_improvement_by_hand():
    # task 0: x in {3, 2}, y in {2, 1}: S(3,2)=1, S(3,1)=1, S(2,2)=1/2, S(2,1)=1 -> 3.5 / 4
    # task 1: x in {1, 2}, y in {1, 3}: S(1,1)=1/2, S(1,3)=0, S(2,1)=1, S(2,3)=0 -> 1.5 / 4
    assert probability_of_improvement_value(X, Y) == pytest.approx((3.5 / 4 + 1.5 / 4) / 2)  # 0.625
    assert probability_of_improvement_value(Y, X) == pytest.approx(1 - 0.625)  # ties count half on both sides
    assert probability_of_improvement_value(X, X) == pytest.approx(0.5)
    estimate = probability_of_improvement(X, Y)
    assert estimate.value == pytest.approx(0.625) and estimate.runs == (2, 2) and estimate.tasks == 2
    assert estimate.low <= 0.625 <= estimate.high


def test_probability_of_improvement_of_unequal_run_counts_by_hand():
    # one task; x has three runs, y one: S(5,4)=1, S(4,4)=1/2, S(1,4)=0 -> 1.5 / 3
    assert probability_of_improvement_value([5.0, 4.0, 1.0], [4.0]) == pytest.approx(0.5)
    assert probability_of_improvement_value([[5.0], [4.0], [1.0]], [[0.0]]) == pytest.approx(1.0)


def test_iqm_by_hand():
    # 8 scores: a quarter (2) cut from each end -> mean(3, 4, 5, 6)
    assert iqm_value([[1, 2, 3, 4], [5, 6, 7, 100]]) == pytest.approx(4.5)
    # 6 scores: int(1.5) = 1 cut from each end -> mean(2, 3, 4, 5)
    assert iqm_value([[60.0, 2.0, 3.0], [4.0, 5.0, 1.0]]) == pytest.approx(3.5)
    # fewer than 4 scores: nothing is cut, the plain mean
    assert iqm_value([1.0, 2.0, 9.0]) == pytest.approx(4.0)


def frequencies(values: np.ndarray, support: list[float]) -> list[float]:
    assert np.isin(np.round(values, 9), np.round(support, 9)).all(), "a replicate outside the exact support"
    return [float(np.mean(np.isclose(values, s))) for s in support]


def test_bootstrap_replicates_follow_the_exact_resampling_distribution():
    # x's two runs score 1 and 0 on one task, y's single run 0.5: resampling x's runs gives (1,1) w.p. 1/4,
    # (1,0) w.p. 1/2, (0,0) w.p. 1/4, so P(X > Y) is 1, 1/2, 0 with those probabilities
    reps = improvement_replicates([[1.0], [0.0]], [[0.5]], resamples=40_000, seed=1)
    assert frequencies(reps, [0.0, 0.5, 1.0]) == pytest.approx([0.25, 0.5, 0.25], abs=0.01)
    estimate = probability_of_improvement([[1.0], [0.0]], [[0.5]])
    assert (estimate.low, estimate.value, estimate.high) == (0.0, 0.5, 1.0)


def test_the_bootstrap_is_stratified_by_task():
    # run 0 scores (1, 0), run 1 scores (0, 1). Resampling whole runs would always give 1/2; resampling runs per
    # task independently gives the mean of two independent {1, 1/2, 0} draws: 0, 1/4, 1/2, 3/4, 1 with
    # probabilities 1, 4, 6, 4, 1 / 16
    reps = improvement_replicates([[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5]], resamples=40_000, seed=2)
    assert frequencies(reps, [0, 0.25, 0.5, 0.75, 1]) == pytest.approx([1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16], abs=0.01)
    # IQM: two runs (1, 0) and (0, 1): per task the resample holds two of {0, 1}; 4 scores, one cut from each end
    reps = iqm_replicates([[1.0, 0.0], [0.0, 1.0]], resamples=40_000, seed=3)
    # per task the resample holds two ones (1/4), a one and a zero (1/2) or two zeros (1/4); the IQM is the mean
    # of the middle two of the four sorted scores. The exact distribution, enumerated:
    exact: dict[float, float] = {}
    for a, pa in ((2, 0.25), (1, 0.5), (0, 0.25)):  # ones drawn in task 0
        for b, pb in ((2, 0.25), (1, 0.5), (0, 0.25)):  # ones drawn in task 1
            scores = sorted([1.0] * (a + b) + [0.0] * (4 - a - b))
            value = float(np.mean(scores[1:3]))
            exact[value] = exact.get(value, 0.0) + pa * pb
    support = sorted(exact)
    assert frequencies(reps, support) == pytest.approx([exact[s] for s in support], abs=0.01)


def multinomial(size: int) -> dict[tuple[int, ...], float]:
    """{counts of each of `size` items: probability} of drawing `size` items with replacement."""
    out: Counter = Counter()
    for draw in itertools.product(range(size), repeat=size):
        out[tuple(draw.count(i) for i in range(size))] += 1 / size**size
    return dict(out)


def test_the_runs_and_tasks_bootstrap_redraws_whole_runs_and_the_tasks():
    # x's runs score (1, 0) and (0, 1) on two tasks, y's one run 1/2 on both, so S(x_im, y_m) = x_im. A replicate
    # draws run counts (c0, c1) and task counts (t0, t1), each (2, 0), (1, 1) or (0, 2) w.p. 1/4, 1/2, 1/4, and is
    # (c0 t0 + c1 t1) / 4. Enumerated:
    x, y = np.array([[1.0, 0.0], [0.0, 1.0]]), [[0.5, 0.5]]
    exact: Counter = Counter()
    for (c0, c1), pc in multinomial(2).items():
        for (t0, t1), pt in multinomial(2).items():
            exact[(c0 * t0 + c1 * t1) / 4] += pc * pt
    reps = improvement_replicates(x, y, resamples=40_000, seed=8, bootstrap="runs_and_tasks")
    support = sorted(exact)
    assert frequencies(reps, support) == pytest.approx([exact[v] for v in support], abs=0.01)
    # IQM of the same runs: the drawn 2 x 2 scores, one cut from each end
    exact = Counter()
    for counts, pc in multinomial(2).items():
        for tasks, pt in multinomial(2).items():
            scores = sorted(x[i, j] for i in range(2) for j in range(2) for _ in range(counts[i] * tasks[j]))
            exact[float(np.mean(scores[1:3]))] += pc * pt
    reps = iqm_replicates(x, resamples=40_000, seed=9, bootstrap="runs_and_tasks")
    support = sorted(exact)
    assert frequencies(reps, support) == pytest.approx([exact[v] for v in support], abs=0.01)


def test_a_seed_effect_shared_by_every_task_is_not_averaged_away():
    # a study's seed is one policy scored on every prompt: here run 0 wins every task and run 1 loses every task.
    # Over whole runs P(X > Y) is 1, 1/2 or 0 (w.p. 1/4, 1/2, 1/4) however many tasks there are; the stratified
    # bootstrap redraws the runs per task, and its replicates close in on 1/2 as the tasks grow.
    tasks = 400
    x, y = np.array([[1.0] * tasks, [0.0] * tasks]), np.full((1, tasks), 0.5)
    whole = improvement_replicates(x, y, resamples=4_000, seed=10, bootstrap="runs_and_tasks")
    assert frequencies(whole, [0.0, 0.5, 1.0]) == pytest.approx([0.25, 0.5, 0.25], abs=0.03)
    stratified = improvement_replicates(x, y, resamples=4_000, seed=11)
    assert np.std(stratified) == pytest.approx(np.sqrt(1 / 8 / tasks), rel=0.1)
    estimate = probability_of_improvement(x, y, bootstrap="runs_and_tasks")
    assert (estimate.low, estimate.high) == (0.0, 1.0)


def test_one_run_per_task_gives_a_point_interval():
    estimate = probability_of_improvement([[0.2, 0.9]], [[0.1, 0.9]])
    assert (estimate.low, estimate.value, estimate.high) == (0.75, 0.75, 0.75)
    estimate = iqm([[0.2, 0.9, 0.4, 0.5]])
    assert estimate.low == estimate.value == estimate.high


SCORES_A = np.array([0.61, 0.55, 0.72, 0.48, 0.66, 0.59, 0.70, 0.52, 0.63, 0.57, 0.68, 0.50])
SCORES_B = np.array([0.58, 0.49, 0.60, 0.51, 0.55, 0.62, 0.47, 0.53, 0.56])


@pytest.mark.parametrize("bootstrap", ["stratified", "runs_and_tasks"])
def test_one_task_iqm_interval_matches_scipy_bootstrap(bootstrap):
    ours = iqm(SCORES_A, resamples=40_000, seed=4, bootstrap=bootstrap)
    theirs = sps.bootstrap((SCORES_A,), lambda a, axis: sps.trim_mean(a, 0.25, axis=axis), method="percentile",
                           n_resamples=40_000, random_state=5, vectorized=True).confidence_interval
    spread = SCORES_A.max() - SCORES_A.min()
    assert ours.value == pytest.approx(sps.trim_mean(SCORES_A, 0.25))
    assert ours.low == pytest.approx(theirs.low, abs=0.02 * spread)
    assert ours.high == pytest.approx(theirs.high, abs=0.02 * spread)


@pytest.mark.parametrize("bootstrap", ["stratified", "runs_and_tasks"])
def test_one_task_improvement_interval_matches_scipy_two_sample_bootstrap(bootstrap):
    def statistic(a, b, axis):
        return ((a[..., :, None] > b[..., None, :]) + 0.5 * (a[..., :, None] == b[..., None, :])).mean(axis=(-2, -1))

    ours = probability_of_improvement(SCORES_A, SCORES_B, resamples=40_000, seed=6, bootstrap=bootstrap)
    theirs = sps.bootstrap((SCORES_A, SCORES_B), statistic, method="percentile", n_resamples=40_000,
                           random_state=7, vectorized=True, axis=-1).confidence_interval
    # by hand: of the 12 x 9 = 108 pairs, A's score is higher in 76 and equal in 1 (0.55)
    assert ours.value == pytest.approx(76.5 / 108)
    assert ours.low == pytest.approx(theirs.low, abs=0.02)
    assert ours.high == pytest.approx(theirs.high, abs=0.02)


def test_bad_shapes_are_errors():
    with pytest.raises(ValueError, match="same tasks"):
        probability_of_improvement_value([[1.0, 2.0]], [[1.0]])
    with pytest.raises(ValueError, match="finite"):
        iqm_value([[1.0, float("nan")]])
    with pytest.raises(ValueError, match="at least one"):
        iqm_value(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="bootstrap must be one of stratified, runs_and_tasks, got 'seeds'"):
        iqm([[1.0, 2.0]], bootstrap="seeds")
