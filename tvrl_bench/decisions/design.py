"""What a staged study decides (`sweeps.study.decide`) and which arms it compares.

    sweeps.study.seeds = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    sweeps.study.decide = {'baseline': {'credit': 'uniform'}, 'alpha': 0.05, 'seeds_per_stage': 5,
                           'max_stages': 3, 'margin': 3.0}

An arm is one combination of the study's axis values (its trials differ only by seed). Each arm is compared with
its baseline arm: the arm itself with the baseline's axis values put in (`{'credit': 'uniform'}` compares every
router with uniform credit under the same sampler and objective). An arm that is its own baseline is a baseline;
an arm whose baseline is not in the study (a null control whose uniform-credit twin is excluded) is a control:
it runs the first stage only and is not decided. Stage k runs seeds[(k-1) n : k n] (n = seeds_per_stage) for the
baselines and the arms still open, so trial keys never depend on the stage.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from tvrl_bench.decisions.sequential import Comparison, least_seeds_per_stage

DEFAULTS = {"alpha": 0.05, "seeds_per_stage": 5, "max_stages": 3, "margin": 0.0, "metric": "wide_eval/overall",
            "permutations": 20_000}
KEYS = ("baseline", *DEFAULTS)
Arm = tuple[tuple[str, str], ...]  # ((axis, value), ...) in the study's axis order


def arm_name(arm: Arm) -> str:
    """'sampler=flow credit=uniform': how tables, lines and the parent run name an arm."""
    return " ".join(f"{axis}={value}" for axis, value in arm)


@dataclass(frozen=True)
class StagedDesign:
    """The decision setting of a study: baseline axis values, family-wise error rate, stage size, most stages,
    the margin of `within` (points; 0: never decided the same), the metric read (x100) and the permutations drawn."""

    baseline: dict[str, str]
    alpha: float = DEFAULTS["alpha"]
    seeds_per_stage: int = DEFAULTS["seeds_per_stage"]
    max_stages: int = DEFAULTS["max_stages"]
    margin: float = DEFAULTS["margin"]
    metric: str = DEFAULTS["metric"]
    permutations: int = DEFAULTS["permutations"]
    seeds: tuple[int, ...] = field(default=())

    @classmethod
    def from_study(cls, decide: dict, seeds: list[int]) -> "StagedDesign":
        """From a validated `sweeps.study.decide` dict and the study's seeds (the first n x K are the stages')."""
        values = {**DEFAULTS, **decide}
        n, k = int(values["seeds_per_stage"]), int(values["max_stages"])
        return cls(dict(values["baseline"]), float(values["alpha"]), n, k, float(values["margin"]),
                   str(values["metric"]), int(values["permutations"]), tuple(seeds[: n * k]))

    @property
    def least_seeds(self) -> int:
        return least_seeds_per_stage(self.alpha, self.max_stages)

    def stage_of(self, seed: int) -> int | None:
        """The stage (1-based) whose seeds hold `seed`, or None for a seed outside the stages."""
        if seed not in self.seeds:
            return None
        return self.seeds.index(seed) // self.seeds_per_stage + 1

    def stage_seeds(self, stage: int) -> tuple[int, ...]:
        n = self.seeds_per_stage
        return self.seeds[(stage - 1) * n: stage * n]

    def fingerprint(self, arms: list[Arm]) -> str:
        """What the decisions depend on, as JSON: recorded on the study's parent run at its first stage; a study
        edited between stages (another rate, stage size, baseline, margin, metric or set of arms) no longer
        matches it."""
        record = {**asdict(self), "seeds": list(self.seeds), "arms": sorted(arm_name(a) for a in arms)}
        return json.dumps(record, sort_keys=True)


@dataclass
class ArmPlan:
    """The study's arms split into baselines, compared arms (with their comparison) and controls."""

    comparisons: list[Comparison]
    baselines: list[str]
    controls: list[str]
    arms: dict[str, Arm]


def plan_arms(arms: list[Arm], baseline: dict[str, str]) -> ArmPlan:
    """Each arm's comparison with its baseline arm (see the module docstring); arms by name, in study order."""
    named = {arm_name(a): a for a in arms}
    comparisons, baselines, controls = [], [], []
    for name, arm in named.items():
        twin = tuple((axis, baseline.get(axis, value)) for axis, value in arm)
        twin_name = arm_name(twin)
        if twin == arm:
            baselines.append(name)
        elif twin_name in named:
            comparisons.append(Comparison(name, twin_name))
        else:
            controls.append(name)
    return ArmPlan(comparisons, baselines, controls, named)
