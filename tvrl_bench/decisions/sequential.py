"""The group-sequential permutation test behind staged decisions (AdaStop's design, Mathieu et al., TMLR 2024).

A study compares L arms with their baselines (comparison c: arm a_c against baseline b_c) in up to K stages; stage
k adds n values (one per seed) to every arm still open and to its baseline. After stage k the statistic of
comparison c is the mean over stages of the stage's difference of means,

    T_c(k) = (1/k) sum_{s <= k} (mean a_c[s] - mean b_c[s])              (points, like a table's delta)

and its null distribution comes from permutations within each stage's block: the n_a + n_b values of a_c and b_c
in stage s are relabelled at random, the same relabelling (lockstep) for every comparison with the same block
shape, so comparisons that share a baseline keep their correlation. Sample 0 is the identity (the data as
observed), so no p-value is below 1/B.

Decisions at stage k, with the family-wise error rate alpha spent linearly (alpha * k / K by the end of stage k):
- step-down over the open comparisons: the boundary b_k is the smallest value such that the share of permutation
  samples that crossed no earlier boundary and whose max_c |T_c(k)| over the open comparisons exceeds b_k is at
  most the level left at stage k; while the open comparison with the largest |T_c(k)| exceeds it, that comparison
  is decided (`larger` when T > 0, `smaller` when T < 0) and the boundary is recomputed without it;
- with a margin delta > 0, an open comparison whose interval T_c(k) +- b_k lies inside (-delta, +delta) is decided
  `within` (no difference of delta or more: the interval is the permutation test inverted under a location shift);
- comparisons still open after stage K are `undecided`.

The test is unpaired: seeds are not matched across arms. With 5 seeds a stage, an exact paired test flips the signs
of 5 differences, 32 patterns, so its smallest two-sided p-value is 1/16 and it can never reach 0.05; arms that
share a seed are positively correlated, which makes an unpaired test conservative, not liberal
(docs/sweeps.md#staged-decisions gives the simulation). Shapes: values are plain float lists per stage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

VERDICTS = ("larger", "smaller", "within", "open", "undecided")


@dataclass(frozen=True)
class Comparison:
    """Arm `arm` against its baseline arm `baseline` (both are the study's arm labels)."""

    arm: str
    baseline: str


@dataclass
class Verdict:
    """Where a comparison stands after a stage: its verdict, the stage that decided it (or the last one seen), its
    statistic T (points) and the boundary b of that stage (its simultaneous half-width), values used per side."""

    comparison: Comparison
    verdict: str
    stage: int
    difference: float
    boundary: float
    n_arm: int
    n_baseline: int

    @property
    def decided(self) -> bool:
        return self.verdict not in ("open", "undecided")


@dataclass
class StageResult:
    """After stage `stage`: every comparison's verdict, the boundary, and the alpha spent so far."""

    stage: int
    verdicts: list[Verdict]
    boundary: float
    spent: float
    open: list[Comparison] = field(default_factory=list)


def least_seeds_per_stage(alpha: float, max_stages: int) -> int:
    """The fewest values per arm and stage with which the first stage can ever decide: the smallest two-sided
    permutation p-value of two blocks of n, 2 / C(2n, n), must not exceed the first stage's level alpha / K."""
    n = 1
    while 2 / math.comb(2 * n, n) > alpha / max_stages:
        n += 1
    return n


def _stage_statistics(blocks: list[tuple[np.ndarray, np.ndarray]], permutations: int,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Observed [L] and permuted [L, B] differences of means for one stage's blocks (arm values, baseline values)
    of L comparisons; comparisons with the same block shape share each permutation (sample 0: the identity)."""
    observed = np.array([a.mean() - b.mean() for a, b in blocks])
    null = np.empty((len(blocks), permutations))
    orders: dict[tuple[int, int], np.ndarray] = {}
    for shape in sorted({(len(a), len(b)) for a, b in blocks}):
        size = sum(shape)
        draws = rng.random((permutations, size)).argsort(axis=1)
        draws[0] = np.arange(size)
        orders[shape] = draws
    for c, (a, b) in enumerate(blocks):
        order = orders[(len(a), len(b))]
        pooled = np.concatenate([a, b])[order]  # [B, n_a + n_b]
        null[c] = pooled[:, : len(a)].mean(axis=1) - pooled[:, len(a):].mean(axis=1)
    return observed, null


def _boundary(maxima: np.ndarray, alive: np.ndarray, level: float) -> tuple[float, float]:
    """(b, used): the smallest b such that the share of samples alive with maxima > b is at most `level`, and that
    share. maxima, alive: [B]."""
    total = maxima.size
    allowed = int(math.floor(level * total + 1e-9))
    alive_values = np.sort(maxima[alive])[::-1]
    if allowed >= alive_values.size:
        return -math.inf, alive_values.size / total
    b = float(alive_values[allowed])
    return b, float(np.count_nonzero(alive & (maxima > b))) / total


def staged_test(values: dict[str, list[list[float]]], comparisons: list[Comparison], alpha: float,
                max_stages: int, margin: float = 0.0, permutations: int = 20_000, seed: int = 0) -> list[StageResult]:
    """Run the test over the stages present in `values` ({arm: [stage 1 values, stage 2 values, ...]}) and return
    one StageResult per stage run. A comparison decided at a stage keeps its verdict; a later stage's values of
    its arm are ignored. Deterministic given `seed` (a rerun reaches the same decisions)."""
    if not comparisons:
        return []
    stages = min(len(values[c.baseline]) for c in comparisons)
    stages = min(stages, max_stages)
    rng = np.random.default_rng(seed)
    L = len(comparisons)
    sums_obs, sums_null = np.zeros(L), np.zeros((L, permutations))
    counts = np.zeros(L, dtype=int)
    n_arm, n_base = np.zeros(L, dtype=int), np.zeros(L, dtype=int)
    alive = np.ones(permutations, dtype=bool)
    spent = 0.0
    open_ids = list(range(L))
    final: dict[int, Verdict] = {}
    results = []
    for stage in range(1, stages + 1):
        ids = [c for c in open_ids if len(values[comparisons[c].arm]) >= stage]
        blocks = [(np.asarray(values[comparisons[c].arm][stage - 1], float),
                   np.asarray(values[comparisons[c].baseline][stage - 1], float)) for c in ids]
        if any(a.size == 0 or b.size == 0 for a, b in blocks):
            break
        observed, null = _stage_statistics(blocks, permutations, rng)
        for row, c in enumerate(ids):
            sums_obs[c] += observed[row]
            sums_null[c] += null[row]
            counts[c] += 1
            n_arm[c] += blocks[row][0].size
            n_base[c] += blocks[row][1].size
        level = alpha * stage / max_stages - spent
        still = list(ids)
        boundary, used, maxima = math.inf, 0.0, np.zeros(permutations)
        while still:
            stats = {c: sums_obs[c] / counts[c] for c in still}
            maxima = np.max(np.abs(np.stack([sums_null[c] / counts[c] for c in still])), axis=0)
            boundary, used = _boundary(maxima, alive, level)
            top = max(still, key=lambda c: abs(stats[c]))
            if abs(stats[top]) > boundary:
                verdict = "larger" if stats[top] > 0 else "smaller"
                final[top] = Verdict(comparisons[top], verdict, stage, stats[top], boundary, n_arm[top], n_base[top])
                still.remove(top)
                continue
            break
        if still:
            spent += used
            alive &= maxima <= boundary
        for c in list(still):
            t = sums_obs[c] / counts[c]
            if margin > 0 and abs(t) + boundary < margin:
                final[c] = Verdict(comparisons[c], "within", stage, t, boundary, n_arm[c], n_base[c])
                still.remove(c)
        open_ids = [c for c in open_ids if c not in final]
        last = stage == max_stages
        verdicts = []
        for c in range(L):
            if c in final:
                verdicts.append(final[c])
            else:
                t = sums_obs[c] / counts[c] if counts[c] else math.nan
                verdicts.append(Verdict(comparisons[c], "undecided" if last else "open", stage, t, boundary,
                                        n_arm[c], n_base[c]))
        results.append(StageResult(stage, verdicts, boundary, spent, [comparisons[c] for c in open_ids]))
        if not open_ids:
            break
    return results
