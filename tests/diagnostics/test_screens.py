"""The credit screens' statistics against independent computations (numpy, hand-worked cases)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tvrl_bench.diagnostics.screens import (cosines_to_reference, effective_fraction, group_centred, local_share,
                                            outcome_correlation, paired_gain, variance_parts, variance_shares)


def test_effective_fraction_of_uniform_partial_and_empty_maps():
    maps = torch.zeros(3, 100)
    maps[0] = 1.0
    maps[1, :25] = 4.0  # uniform on a quarter
    # maps[2] all zero: counted as uniform, as a router makes it
    assert torch.allclose(effective_fraction(maps), torch.tensor([1.0, 0.25, 1.0], dtype=torch.float64))
    w = torch.rand(50, generator=torch.Generator().manual_seed(0))
    p = w.numpy() / w.numpy().sum()
    assert float(effective_fraction(w)) == pytest.approx(1 / (50 * (p**2).sum()))


def test_local_share_counts_failed_checks_with_small_maps():
    failed = torch.tensor([[True, True, False], [True, False, False]])
    fractions = torch.tensor([[0.2, 0.9, 0.1], [0.3, 0.1, 0.1]])
    assert local_share(failed, fractions, 0.25) == pytest.approx(1 / 3)
    assert local_share(failed, fractions, 1 / 3) == pytest.approx(2 / 3)
    assert math.isnan(local_share(torch.zeros(2, 3, dtype=torch.bool), fractions, 0.5))


def test_cosines_against_numpy():
    g = torch.randn(8, 30, generator=torch.Generator().manual_seed(1))
    ref = torch.randn(30, generator=torch.Generator().manual_seed(2))
    a, r = g.numpy().astype(np.float64), ref.numpy().astype(np.float64)
    cos = a @ r / (np.linalg.norm(a, axis=1) * np.linalg.norm(r))
    stat = cosines_to_reference(g, ref)
    assert stat.mean == pytest.approx(cos.mean()) and stat.se == pytest.approx(cos.std(ddof=1) / np.sqrt(8))
    assert stat.n == 8


def test_group_centring_with_a_mask():
    values = torch.tensor([[1.0, 5.0], [3.0, 9.0], [10.0, 0.0]])
    mask = torch.tensor([[True, True], [True, False], [True, True]])
    out = group_centred(values, torch.tensor([0, 0, 1]), mask)
    assert torch.allclose(out, torch.tensor([[-1.0, 0.0], [1.0, 0.0], [0.0, 0.0]], dtype=torch.float64))


def test_outcome_correlation_of_checks_that_fail_together_apart_and_against_each_other():
    rng = np.random.default_rng(0)
    groups = torch.arange(400).repeat_interleave(4)
    a = rng.integers(0, 2, 1600).astype(float)
    independent = np.stack([a, rng.integers(0, 2, 1600)], 1)
    together = np.stack([a, a], 1)
    against = np.stack([a, 1 - a], 1)
    mask = torch.ones(1600, 2, dtype=torch.bool)
    assert abs(outcome_correlation(torch.tensor(independent), mask, groups)) < 0.08
    assert outcome_correlation(torch.tensor(together), mask, groups) == pytest.approx(1.0)
    assert outcome_correlation(torch.tensor(against), mask, groups) == pytest.approx(-1.0)


def test_outcome_correlation_is_the_pearson_correlation_of_the_centred_pairs_listed_both_ways():
    rng = np.random.default_rng(1)
    groups = np.arange(50).repeat(4)
    x = rng.normal(size=(200, 2))
    x[:, 1] += 0.5 * x[:, 0]
    centred = x - np.stack([x[groups == g].mean(0) for g in groups])
    both_ways = np.concatenate([centred, centred[:, ::-1]])
    expected = (both_ways[:, 0] * both_ways[:, 1]).sum() / np.sqrt((both_ways[:, 0] ** 2).sum() * (both_ways[:, 1] ** 2).sum())
    got = outcome_correlation(torch.tensor(x), torch.ones(200, 2, dtype=torch.bool), torch.tensor(groups))
    assert got == pytest.approx(expected)


def test_variance_shares_sum_to_one_and_match_a_numpy_decomposition():
    rng = np.random.default_rng(2)
    groups = np.arange(30).repeat(4)
    scores = rng.random((120, 3))
    scores[:, 2] *= 0.1  # a check that hardly varies carries little of the variance
    labels = [["colour", "motion", "background"]] * 120
    shares = variance_shares(torch.tensor(scores), torch.ones(120, 3, dtype=torch.bool), torch.tensor(groups), labels)
    assert sum(shares.values()) == pytest.approx(1.0)
    centred = scores - np.stack([scores[groups == g].mean(0) for g in groups])
    reward = centred.mean(1)
    expected = {name: (centred[:, k] * reward).sum() / 3 / (reward**2).sum() for k, name in enumerate(labels[0])}
    assert shares == pytest.approx(expected)
    assert shares["background"] < 0.1


def test_variance_parts_counts_the_checks_that_carry_the_variance():
    groups = torch.arange(20).repeat_interleave(4)
    g = torch.Generator().manual_seed(3)
    mask = torch.ones(80, 4, dtype=torch.bool)
    equal = torch.rand(80, 4, generator=g)
    one = torch.zeros(80, 4)
    one[:, 0] = torch.rand(80, generator=g)
    assert 3.0 < variance_parts(equal, mask, groups) <= 4.0
    assert variance_parts(one, mask, groups) == pytest.approx(1.0)
    assert math.isnan(variance_parts(torch.zeros(80, 4), mask, groups))


def test_paired_gain_is_the_paired_t_interval():
    from scipy import stats

    treated, baseline = {"0": 3.0, "1": 5.0, "2": 4.5}, {"0": 1.0, "1": 2.0, "2": 2.5}
    gain = paired_gain(treated, baseline)
    diffs = np.array([2.0, 3.0, 2.0])
    half = stats.t.ppf(0.975, 2) * diffs.std(ddof=1) / np.sqrt(3)
    assert gain.delta == pytest.approx(diffs.mean())
    assert (gain.ci_low, gain.ci_high) == pytest.approx((diffs.mean() - half, diffs.mean() + half))


def test_the_ratio_interval_is_a_paired_percentile_bootstrap():
    from tvrl_bench.diagnostics.screens import ratio_interval

    g = torch.Generator().manual_seed(4)
    base = 0.1 + 0.05 * torch.randn(32, generator=g, dtype=torch.float64)
    twice = 2 * base  # paired: every batch exactly doubled, so every redraw gives 2
    assert ratio_interval(twice, base) == pytest.approx((2.0, 2.0))
    noisy = 2 * base + 0.05 * torch.randn(32, generator=g, dtype=torch.float64)
    low, high = ratio_interval(noisy, base)
    rng = np.random.default_rng(0)  # an independent bootstrap of the same statistic
    picks = rng.integers(0, 32, (4000, 32))
    ratios = noisy.numpy()[picks].mean(1) / base.numpy()[picks].mean(1)
    assert low < float(noisy.mean() / base.mean()) < high
    assert (low, high) == pytest.approx(tuple(np.quantile(ratios, [0.025, 0.975])), abs=0.08)
