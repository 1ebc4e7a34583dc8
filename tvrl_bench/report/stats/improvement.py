"""Probability of improvement and the interquartile mean (IQM), with bootstrap intervals: rliable's stratified
bootstrap, or one that redraws whole runs and the tasks.

These are rliable's aggregate metrics (Agarwal et al., "Deep RL at the edge of the statistical precipice", 2021),
computed here with numpy and scipy (the rliable repository is archived). Scores are a matrix per method,
scores[runs, tasks]: on a study page a run is a seed and a task is an eval prompt (or a single task, the run's
overall score, where per-prompt scores are not logged).

- Probability of improvement of X over Y: the probability that X's score beats Y's on a random task, for a
  random run of each, ties counting one half:
      P(X > Y) = 1/M sum_m 1/(N K) sum_i sum_j S(x_im, y_jm),  S(x, y) = 1 if x > y, 1/2 if x = y, 0 otherwise,
  over the M tasks both methods have (the Mann-Whitney U statistic of each task, normalised, averaged over tasks).
- IQM: the mean of the middle 50% of all N x M scores of a method, `scipy.stats.trim_mean(scores, 0.25)` (a
  quarter of the scores, rounded down, cut from each end).

Two bootstraps give the interval, the percentile interval of the replicates (95% by default, 2,000 replicates,
fixed seed); with one task they are the same, the ordinary bootstrap of the runs:
- `stratified` (rliable's): each replicate resamples, for every task separately, the runs with replacement (for
  the probability of improvement X's and Y's runs independently), so every replicate keeps all tasks. Right when
  each task's runs are independent of the other tasks' (an RL suite, where every game trains its own agents).
  With one run per task every replicate equals the estimate and the interval is a single point.
- `runs_and_tasks`: each replicate draws whole runs with replacement (X's and Y's independently), the same draw for
  every task, and draws the tasks with replacement. Right when a run is scored on every task, as a study's seed is:
  one trained policy scored on every prompt, so a seed's scores move together across the prompts. The stratified
  bootstrap would redraw that seed independently per prompt and average its effect away over the prompts,
  giving an interval too narrow by about the square root of the number of prompts in the seed-level part.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEVEL = 0.95
RESAMPLES = 2_000
BOOTSTRAPS = ("stratified", "runs_and_tasks")


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its percentile bootstrap interval [low, high] over runs and tasks."""

    value: float
    low: float
    high: float
    runs: tuple[int, ...]  # runs (seeds) of each side: (N,) for IQM, (N, K) for a probability of improvement
    tasks: int

    def excludes_value(self, null: float) -> bool:
        """True when the interval lies entirely above or below `null`."""
        return bool(self.low > null or self.high < null)


def _matrix(scores: np.ndarray | list) -> np.ndarray:
    a = np.asarray(scores, dtype=float)
    if a.ndim == 1:
        a = a[:, None]  # runs of a single task
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"scores must be a [runs, tasks] matrix with at least one of each, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError("scores must be finite (leave out the tasks a run has no score for)")
    return a


def improvement_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """S(x_im, y_jm) for every pair of runs and task: [N, K, M] with 1 (x wins), 0.5 (tie) or 0 (y wins)."""
    xm, ym = x[:, None, :], y[None, :, :]
    return (xm > ym).astype(float) + 0.5 * (xm == ym)


def probability_of_improvement_value(x: np.ndarray | list, y: np.ndarray | list) -> float:
    """P(X > Y) of scores x[N, M] and y[K, M] (same tasks in the same column order)."""
    x, y = _matrix(x), _matrix(y)
    _same_tasks(x, y)
    return float(improvement_kernel(x, y).mean())


def iqm_value(scores: np.ndarray | list) -> float:
    """The interquartile mean of all scores[N, M]: scipy.stats.trim_mean(scores, 0.25) over every score."""
    from scipy import stats as sps

    return float(sps.trim_mean(_matrix(scores).ravel(), 0.25))


def _same_tasks(x: np.ndarray, y: np.ndarray) -> None:
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"both methods need the same tasks: {x.shape[1]} and {y.shape[1]} columns")


def _check_bootstrap(bootstrap: str) -> None:
    if bootstrap not in BOOTSTRAPS:
        raise ValueError(f"bootstrap must be one of {', '.join(BOOTSTRAPS)}, got {bootstrap!r}")


def _counts(rng: np.random.Generator, runs: int, tasks: int, resamples: int) -> np.ndarray:
    """How often each run is drawn in each task's resample: [B, runs, tasks], each [b, :, m] summing to `runs`."""
    draws = rng.integers(0, runs, size=(resamples, runs, tasks))
    # bin (b, drawn run, m) of every draw, counted with one bincount
    b = np.arange(resamples)[:, None, None]
    m = np.arange(tasks)[None, None, :]
    flat = (b * runs + draws) * tasks + m
    return np.bincount(flat.ravel(), minlength=resamples * runs * tasks).reshape(resamples, runs, tasks).astype(float)


def _whole_counts(rng: np.random.Generator, size: int, resamples: int) -> np.ndarray:
    """How often each of `size` items is drawn in a resample of `size` with replacement: [B, size]."""
    draws = rng.integers(0, size, size=(resamples, size))
    flat = np.arange(resamples)[:, None] * size + draws
    return np.bincount(flat.ravel(), minlength=resamples * size).reshape(resamples, size).astype(float)


def improvement_replicates(x: np.ndarray | list, y: np.ndarray | list, resamples: int = RESAMPLES,
                           seed: int = 0, bootstrap: str = "stratified") -> np.ndarray:
    """The bootstrap replicates [B] of P(X > Y) (see the module docstring for the two bootstraps)."""
    _check_bootstrap(bootstrap)
    x, y = _matrix(x), _matrix(y)
    _same_tasks(x, y)
    (n, m), k = x.shape, y.shape[0]
    kernel = improvement_kernel(x, y)  # [N, K, M]
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    chunk = max(1, 4_000_000 // max(1, (n + k) * m if bootstrap == "stratified" else n * k + m))
    for start in range(0, resamples, chunk):
        b = min(chunk, resamples - start)
        if bootstrap == "stratified":
            cx, cy = _counts(rng, n, m, b), _counts(rng, k, m, b)
            out[start : start + b] = np.einsum("bim,ijm,bjm->b", cx, kernel, cy) / (n * k * m)
        else:
            cx, cy, ct = _whole_counts(rng, n, b), _whole_counts(rng, k, b), _whole_counts(rng, m, b)
            per_pair = np.einsum("ijm,bm->bij", kernel, ct)  # [B, N, K]: each pair of runs over the drawn tasks
            out[start : start + b] = np.einsum("bi,bij,bj->b", cx, per_pair, cy) / (n * k * m)
    return out


def iqm_replicates(scores: np.ndarray | list, resamples: int = RESAMPLES, seed: int = 0,
                   bootstrap: str = "stratified") -> np.ndarray:
    """The bootstrap replicates [B] of the IQM (see the module docstring for the two bootstraps)."""
    from scipy import stats as sps

    _check_bootstrap(bootstrap)
    x = _matrix(scores)
    n, m = x.shape
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    chunk = max(1, 4_000_000 // max(1, n * m))
    for start in range(0, resamples, chunk):
        b = min(chunk, resamples - start)
        if bootstrap == "stratified":
            rows = rng.integers(0, n, size=(b, n, m))
            picked = np.take_along_axis(np.broadcast_to(x, (b, n, m)), rows, axis=1)
        else:
            rows, cols = rng.integers(0, n, size=(b, n)), rng.integers(0, m, size=(b, m))
            picked = x[rows[:, :, None], cols[:, None, :]]  # [B, N, M]: whole runs, the drawn tasks
        out[start : start + b] = sps.trim_mean(picked.reshape(b, n * m), 0.25, axis=1)
    return out


def _interval(replicates: np.ndarray, level: float) -> tuple[float, float]:
    low, high = np.quantile(replicates, [0.5 - level / 2, 0.5 + level / 2])
    return float(low), float(high)


def probability_of_improvement(x: np.ndarray | list, y: np.ndarray | list, level: float = LEVEL,
                               resamples: int = RESAMPLES, seed: int = 0, bootstrap: str = "stratified") -> Estimate:
    """P(X > Y) of scores x[N, M], y[K, M] with its bootstrap percentile interval."""
    xm, ym = _matrix(x), _matrix(y)
    low, high = _interval(improvement_replicates(xm, ym, resamples, seed, bootstrap), level)
    value = probability_of_improvement_value(xm, ym)
    return Estimate(value, low, high, (xm.shape[0], ym.shape[0]), xm.shape[1])


def iqm(scores: np.ndarray | list, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = 0,
        bootstrap: str = "stratified") -> Estimate:
    """The IQM of scores[N, M] with its bootstrap percentile interval."""
    x = _matrix(scores)
    low, high = _interval(iqm_replicates(x, resamples, seed, bootstrap), level)
    value = iqm_value(x)
    return Estimate(value, low, high, (x.shape[0],), x.shape[1])
