"""The statistics behind every table: spread over seeds, delta intervals, win-rate intervals.

- A cell's sample unit is the seed: runs of the same seed in a cell are averaged first, then the cell shows the
  mean over seeds, the sample standard deviation over seeds (ddof = 1) and n = the number of seeds.
- A delta is a difference of means (treated minus baseline, as the paper computes it). Its 95% confidence interval
  is Welch's t-interval: it assumes neither equal variances nor that seeds are paired across the two cells, so it
  stays valid when the two cells have different seeds or different numbers of seeds (it is conservative when the
  seeds are in fact paired). With fewer than 2 seeds on either side it is undefined (NaN).
- A paired delta (a table column with `paired = true`, for studies whose methods share seeds, prompts and eval
  noise) is the mean of the per-seed differences over the seeds both cells have, with the t-interval of that
  mean (n - 1 degrees of freedom): differences between seeds (which prompts and noise a seed drew) cancel.
- The minimum detectable delta of such a comparison at 80% power and 5% two-sided significance is
  (t_{0.975, n-1} + t_{0.80, n-1}) * sd(differences) / sqrt(n).
- A win rate excluding ties is wins / (wins + losses). Its interval is a percentile bootstrap that resamples
  prompts (all judgments of a prompt, over seeds and judges, move together, since they are not independent).
  When every bootstrap replicate is the same (one side won every decisive judgment, or a single prompt), the
  bootstrap cannot express any uncertainty, and the exact Clopper-Pearson interval on the decisive judgments is
  reported instead (for all wins out of n: [(alpha / 2) ** (1 / n), 1]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEVEL = 0.95


@dataclass(frozen=True)
class ValueStat:
    """Mean and sample std over n seed values (std is NaN for n < 2); `values` are the per-seed values."""

    mean: float
    std: float
    n: int
    values: tuple[float, ...] = ()


@dataclass(frozen=True)
class DeltaStat:
    """treated mean - baseline mean, with the Welch 95% interval [ci_low, ci_high] (NaN when undefined)."""

    delta: float
    ci_low: float
    ci_high: float
    n_treated: int
    n_baseline: int

    @property
    def excludes_zero(self) -> bool:
        """True when the interval is defined and lies entirely above or below zero."""
        return bool(self.ci_low > 0 or self.ci_high < 0)


def value_stat(values: np.ndarray | list[float]) -> ValueStat:
    """ValueStat of per-seed values[n]."""
    v = np.asarray(values, dtype=float)
    n = int(v.size)
    if n == 0:
        return ValueStat(float("nan"), float("nan"), 0, ())
    std = float(np.std(v, ddof=1)) if n >= 2 else float("nan")
    return ValueStat(float(np.mean(v)), std, n, tuple(float(x) for x in v))


def welch_delta(treated: ValueStat, baseline: ValueStat, level: float = LEVEL) -> DeltaStat:
    """Difference of means with Welch's t-interval (Welch-Satterthwaite degrees of freedom)."""
    d = treated.mean - baseline.mean
    nt, nb = treated.n, baseline.n
    if nt < 2 or nb < 2:
        return DeltaStat(d, float("nan"), float("nan"), nt, nb)
    vt, vb = treated.std**2 / nt, baseline.std**2 / nb
    se = float(np.sqrt(vt + vb))
    if se == 0.0:
        return DeltaStat(d, d, d, nt, nb)
    df = (vt + vb) ** 2 / (vt**2 / (nt - 1) + vb**2 / (nb - 1))
    from scipy import stats as sps

    half = float(sps.t.ppf(0.5 + level / 2, df)) * se
    return DeltaStat(d, d - half, d + half, nt, nb)


def paired_delta(treated: dict[str, float], baseline: dict[str, float], level: float = LEVEL) -> DeltaStat:
    """Mean of treated[seed] - baseline[seed] over the seeds in both, with its t-interval (NaN for < 2 seeds)."""
    seeds = sorted(set(treated) & set(baseline))
    diffs = np.array([treated[s] - baseline[s] for s in seeds], dtype=float)
    n = int(diffs.size)
    if n == 0:
        return DeltaStat(float("nan"), float("nan"), float("nan"), 0, 0)
    d = float(diffs.mean())
    if n < 2:
        return DeltaStat(d, float("nan"), float("nan"), n, n)
    from scipy import stats as sps

    half = float(sps.t.ppf(0.5 + level / 2, n - 1)) * float(np.std(diffs, ddof=1)) / np.sqrt(n)
    return DeltaStat(d, d - half, d + half, n, n)


def minimum_detectable_delta(sd: float, n: int, power: float = 0.8, level: float = LEVEL) -> float:
    """The smallest true mean difference a paired t-test over n seeds detects with `power` (two-sided, 1 - level)."""
    if n < 2:
        return float("nan")
    from scipy import stats as sps

    return float((sps.t.ppf(0.5 + level / 2, n - 1) + sps.t.ppf(power, n - 1)) * sd / np.sqrt(n))


def clopper_pearson(successes: int, trials: int, level: float = LEVEL) -> tuple[float, float]:
    """Exact binomial interval for successes / trials (trials >= 1)."""
    from scipy import stats as sps

    alpha = 1 - level
    lo = 0.0 if successes == 0 else float(sps.beta.ppf(alpha / 2, successes, trials - successes + 1))
    hi = 1.0 if successes == trials else float(sps.beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return lo, hi


def bootstrap_win_rate(
    wins: np.ndarray,
    losses: np.ndarray,
    level: float = LEVEL,
    resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float, str]:
    """(low, high, method) of the win rate excluding ties, resampling clusters (prompts).

    wins[C], losses[C]: decisive judgments per cluster. method is "bootstrap" or "exact" (Clopper-Pearson, used
    when every replicate is equal, e.g. one side won everything). Deterministic for a given seed.
    """
    wins = np.asarray(wins, dtype=np.int64)
    losses = np.asarray(losses, dtype=np.int64)
    total_w, total_d = int(wins.sum()), int(wins.sum() + losses.sum())
    if total_d == 0:
        return float("nan"), float("nan"), "none"
    rng = np.random.default_rng(seed)
    c = wins.size
    rates = []
    chunk = max(1, 2_000_000 // max(c, 1))
    for start in range(0, resamples, chunk):
        b = min(chunk, resamples - start)
        idx = rng.integers(0, c, size=(b, c))
        w = wins[idx].sum(axis=1)
        d = w + losses[idx].sum(axis=1)
        keep = d > 0
        rates.append(w[keep] / d[keep])
    r = np.concatenate(rates)
    if r.size == 0 or np.ptp(r) == 0.0:
        lo, hi = clopper_pearson(total_w, total_d, level)
        return lo, hi, "exact"
    lo, hi = np.quantile(r, [0.5 - level / 2, 0.5 + level / 2])
    return float(lo), float(hi), "bootstrap"
