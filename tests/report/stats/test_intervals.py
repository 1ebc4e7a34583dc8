"""Spread, delta intervals and win-rate intervals against independent references (statistics, scipy)."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy import stats as sps

from tvrl_bench.report.stats import bootstrap_win_rate, clopper_pearson, value_stat, welch_delta


def test_value_stat_mean_and_sample_std():
    s = value_stat([51.2, 49.8, 53.1])
    assert s.mean == pytest.approx(statistics.fmean([51.2, 49.8, 53.1]), rel=1e-14)
    assert s.std == pytest.approx(statistics.stdev([51.2, 49.8, 53.1]), rel=1e-12)
    assert s.n == 3
    one = value_stat([40.0])
    assert one.mean == 40.0 and one.n == 1 and math.isnan(one.std)


@pytest.mark.parametrize("sizes", [(3, 3), (2, 5), (4, 2), (10, 7)])
def test_welch_interval_matches_scipy_ttest(sizes):
    rng = np.random.default_rng(sum(sizes))
    a = rng.normal(55, 2.0, sizes[0])
    b = rng.normal(52, 4.0, sizes[1])
    d = welch_delta(value_stat(a), value_stat(b))
    reference = sps.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert d.delta == pytest.approx(a.mean() - b.mean(), rel=1e-12)
    assert d.ci_low == pytest.approx(reference.low, rel=1e-10)
    assert d.ci_high == pytest.approx(reference.high, rel=1e-10)
    assert (d.n_treated, d.n_baseline) == sizes
    assert d.excludes_zero == (reference.low > 0 or reference.high < 0)


def test_welch_undefined_below_two_seeds_and_degenerate_without_spread():
    d = welch_delta(value_stat([50.0]), value_stat([48.0, 49.0]))
    assert d.delta == pytest.approx(1.5) and math.isnan(d.ci_low) and math.isnan(d.ci_high)
    assert not d.excludes_zero
    flat = welch_delta(value_stat([50.0, 50.0]), value_stat([48.0, 48.0]))
    assert (flat.ci_low, flat.ci_high) == (2.0, 2.0) and flat.excludes_zero


@pytest.mark.parametrize("k,n", [(0, 5), (3, 10), (17, 20), (20, 20)])
def test_clopper_pearson_matches_scipy_binomtest(k, n):
    reference = sps.binomtest(k, n).proportion_ci(0.95, method="exact")
    lo, hi = clopper_pearson(k, n)
    assert lo == pytest.approx(reference.low, abs=1e-12)
    assert hi == pytest.approx(reference.high, abs=1e-12)


def test_all_wins_gets_the_exact_interval_not_a_zero_width_one():
    wins, losses = np.array([3, 2, 4]), np.array([0, 0, 0])
    lo, hi, method = bootstrap_win_rate(wins, losses)
    assert method == "exact"
    assert lo == pytest.approx(0.025 ** (1 / 9), rel=1e-12) and hi == 1.0
    lo, hi, method = bootstrap_win_rate(losses, wins)  # all losses: the mirror image
    assert method == "exact" and lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 9), rel=1e-12)


def test_unclustered_bootstrap_agrees_with_the_normal_approximation():
    wins = np.array([1] * 240 + [0] * 160)
    losses = 1 - wins
    lo, hi, method = bootstrap_win_rate(wins, losses)
    half = 1.959964 * math.sqrt(0.6 * 0.4 / 400)
    assert method == "bootstrap"
    assert lo == pytest.approx(0.6 - half, abs=0.01) and hi == pytest.approx(0.6 + half, abs=0.01)


def test_clustered_judgments_give_a_wider_interval():
    # 20 prompts with 10 judgments each; within a prompt the verdicts agree (strong clustering)
    clustered_w = np.array([10] * 12 + [0] * 8)
    clustered_l = 10 - clustered_w
    lo_c, hi_c, _ = bootstrap_win_rate(clustered_w, clustered_l)
    # the same 120 wins / 80 losses as independent judgments
    flat_w = np.array([1] * 120 + [0] * 80)
    lo_f, hi_f, _ = bootstrap_win_rate(flat_w, 1 - flat_w)
    assert hi_c - lo_c > 2 * (hi_f - lo_f)
    assert lo_c < 0.6 < hi_c


def test_bootstrap_is_deterministic_and_undefined_without_decisive_judgments():
    wins, losses = np.array([3, 1, 2, 0]), np.array([1, 2, 0, 2])
    assert bootstrap_win_rate(wins, losses) == bootstrap_win_rate(wins, losses)
    lo, hi, method = bootstrap_win_rate(np.array([0, 0]), np.array([0, 0]))
    assert math.isnan(lo) and math.isnan(hi) and method == "none"
