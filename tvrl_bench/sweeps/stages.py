"""A staged study (`sweeps.study.decide`): which trials each stage runs, and the decisions after each stage.

Stage 1 runs every arm (and the base rows) on the first n seeds; after a stage, the group-sequential test
(tvrl_bench/decisions/sequential.py) decides what it can from every finished run of the stages so far, and the
next stage runs its n seeds for the arms still open and their baselines (and the base rows, which cost one
evaluation each, so every trained seed has its base). Decisions are recomputed from the runs each time, so a killed
sweep resumes where it stopped and a rerun reaches the same decisions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tvrl_bench.decisions.design import ArmPlan, StagedDesign, arm_name, plan_arms
from tvrl_bench.decisions.sequential import StageResult, staged_test
from tvrl_bench.sweeps.plan import TrialSpec
from tvrl_bench.sweeps.study import Study


@dataclass
class StagePlan:
    """A staged study's design, arms, and its trials by arm and seed (base rows by seed)."""

    design: StagedDesign
    arms: ArmPlan
    trials: dict[str, dict[int, TrialSpec]]
    base: dict[int, TrialSpec]

    def most_trials(self) -> int:
        """Trials of a grid of the most stages: every arm and base row on every stage's seeds."""
        return sum(len(by_seed) for by_seed in self.trials.values()) + len(self.base)

    def stage_trials(self, stage: int, open_arms: set[str] | None = None) -> list[TrialSpec]:
        """Stage `stage`'s trials: every arm at stage 1, else the open arms and the baselines they need."""
        seeds = self.design.stage_seeds(stage)
        if stage == 1 or open_arms is None:
            arms = list(self.trials)
        else:
            needed = {c.baseline for c in self.arms.comparisons if c.arm in open_arms}
            arms = [a for a in self.trials if a in open_arms or a in needed]
        specs = [self.base[s] for s in seeds if s in self.base]
        return specs + [self.trials[a][s] for a in arms for s in seeds if s in self.trials[a]]


def stage_plan(study: Study, trials: list[TrialSpec]) -> StagePlan:
    """The staged plan of a study with `decide` (its trials: the whole grid of expand(), keys already computed)."""
    design = StagedDesign.from_study(study.decide, study.seeds)
    by_arm: dict[str, dict[int, TrialSpec]] = {}
    base: dict[int, TrialSpec] = {}
    arms = []
    for spec in trials:
        if spec.seed not in design.seeds:
            continue
        if spec.base:
            base[spec.seed] = spec
            continue
        arm = tuple((axis, value) for axis, value in spec.labels.items())
        if arm_name(arm) not in by_arm:
            arms.append(arm)
        by_arm.setdefault(arm_name(arm), {})[spec.seed] = spec
    return StagePlan(design, plan_arms(arms, design.baseline), by_arm, base)


def metric_value(run, metric: str) -> float | None:
    """A finished run's decision metric x 100 (the tables' scale): `metric`, else its `eval/` twin for a
    `wide_eval/` metric the run did not log (the tables' fallback); None when absent or not finite."""
    metrics = run.data.metrics
    value = metrics.get(metric)
    if value is None and metric.startswith("wide_eval/"):
        value = metrics.get("eval/" + metric.removeprefix("wide_eval/"))
    if value is None or not math.isfinite(value):
        return None
    return 100.0 * value


def stage_values(plan: StagePlan, latest_finished, stages: int) -> dict[str, list[list[float]]]:
    """{arm: [values of stage 1, ..., stage `stages`]} from the finished runs (`latest_finished(key)` -> run or
    None); a stage's list holds only the seeds whose trial finished with the metric."""
    values: dict[str, list[list[float]]] = {}
    for arm, by_seed in plan.trials.items():
        values[arm] = []
        for stage in range(1, stages + 1):
            found = []
            for seed in plan.design.stage_seeds(stage):
                run = latest_finished(by_seed[seed].key) if seed in by_seed else None
                value = metric_value(run, plan.design.metric) if run is not None else None
                if value is not None:
                    found.append(value)
            values[arm].append(found)
    return values


def decide(plan: StagePlan, latest_finished, stages: int) -> list[StageResult]:
    """The test's results after each of the first `stages` stages, from the finished runs. A stage whose values
    are missing for an open arm or its baseline ends the sequence there (its trials have not all run)."""
    values = stage_values(plan, latest_finished, stages)
    trimmed = {arm: _until_first_empty(v) for arm, v in values.items()}
    d = plan.design
    return staged_test(trimmed, plan.arms.comparisons, d.alpha, d.max_stages, d.margin, d.permutations)


def _until_first_empty(stage_lists: list[list[float]]) -> list[list[float]]:
    kept = []
    for values in stage_lists:
        if not values:
            break
        kept.append(values)
    return kept
