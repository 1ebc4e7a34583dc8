"""Synthetic studies for the staged test: its false-decision rate on arms equal to the baseline, its power, and the
trials it runs, against a fixed grid of the most stages.

A synthetic study has L arms and one baseline; seed s of arm a gives
    value = mu_a + seed_effect_s * shared + noise_{a,s},
noise normal or heavy-tailed (Student t with 3 degrees of freedom, scaled to the same standard deviation), the
seed effect shared by every arm of that seed (a study's arms run the same seeds). The figures in docs come from
`diagnostics/staged_simulation.py`; the unit tests run the same function on fewer studies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvrl_bench.decisions.sequential import Comparison, staged_test


@dataclass
class SimulationResult:
    """Over `studies` synthetic studies: the share with at least one false decision (larger/smaller on an arm
    equal to the baseline; `within` on an arm farther than the margin), per-arm decision rates [L] by verdict, and
    the mean trials run (arms x seeds, baseline included) against the fixed grid's."""

    studies: int
    family_error: float
    false_within: float
    rates: dict[str, np.ndarray]
    mean_trials: float
    grid_trials: int

    def family_error_interval(self) -> tuple[float, float]:
        """95% Wilson interval of the family-wise error rate over the simulated studies."""
        return wilson(self.family_error, self.studies)


def wilson(share: float, n: int, z: float = 1.96) -> tuple[float, float]:
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def noise(rng: np.random.Generator, shape: tuple[int, ...], sd: float, tails: str) -> np.ndarray:
    """Noise of standard deviation `sd`: `normal`, or `heavy` (Student t, 3 degrees of freedom, variance 3)."""
    if tails == "normal":
        return rng.normal(0.0, sd, shape)
    if tails == "heavy":
        return rng.standard_t(3, shape) * sd / np.sqrt(3.0)
    raise ValueError(f"tails must be 'normal' or 'heavy', not {tails!r}")


def simulate(effects: list[float], sd: float = 4.0, seed_sd: float = 2.0, tails: str = "normal",
             alpha: float = 0.05, seeds_per_stage: int = 5, max_stages: int = 3, margin: float = 0.0,
             studies: int = 1000, permutations: int = 1000, seed: int = 0) -> SimulationResult:
    """Simulate `studies` staged studies whose arms differ from the baseline by `effects` (points, one per arm):
    each stage runs `seeds_per_stage` seeds of every open arm and the baseline, as tvrl-sweep does."""
    rng = np.random.default_rng(seed)
    arms = [f"arm{i}" for i in range(len(effects))]
    comparisons = [Comparison(a, "baseline") for a in arms]
    most = seeds_per_stage * max_stages
    counts = {v: np.zeros(len(arms)) for v in ("larger", "smaller", "within", "undecided")}
    family_errors = false_within = 0
    trials = 0
    for study in range(studies):
        seed_effect = rng.normal(0.0, seed_sd, most)
        draws = {name: mu + seed_effect + noise(rng, (most,), sd, tails)
                 for name, mu in [("baseline", 0.0), *zip(arms, effects)]}
        values = {name: [list(v[s * seeds_per_stage:(s + 1) * seeds_per_stage]) for s in range(max_stages)]
                  for name, v in draws.items()}
        # Stage k's values only count for the arms open after stage k-1 (staged_test ignores a decided arm's later
        # values), so one call over every stage's values decides as the sweep would, stage by stage.
        results = staged_test(values, comparisons, alpha, max_stages, margin, permutations, study + seed * 7919)
        last = results[-1]
        wrong = False
        for i, verdict in enumerate(last.verdicts):
            counts.setdefault(verdict.verdict, np.zeros(len(arms)))[i] += 1
            if effects[i] == 0 and verdict.verdict in ("larger", "smaller"):
                wrong = True
            if verdict.verdict == "within" and abs(effects[i]) >= margin:
                false_within += 1
        family_errors += wrong
        trials += sum(len(r.open) for r in results[:-1]) * seeds_per_stage + (len(arms) + 1) * seeds_per_stage
        trials += sum(1 for r in results[:-1] if r.open) * seeds_per_stage  # the baseline's later stages
    return SimulationResult(studies, family_errors / studies, false_within / studies,
                            {k: v / studies for k, v in counts.items()}, trials / studies,
                            (len(arms) + 1) * most)
