"""A staged study (`sweeps.study.decide`): which trials each stage runs, and the decisions after each stage.

Stage 1 runs every arm (and the base rows) on the first n seeds; after a stage, the group-sequential test
(tvrl_bench/decisions/sequential.py) decides what it can from every finished run of the stages so far, and the
next stage runs its n seeds for the arms still open and their baselines (and the base rows, which cost one
evaluation each, so every trained seed has its base). Decisions are recomputed from the runs each time, so a killed
sweep resumes where it stopped and a rerun reaches the same decisions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tvrl_bench.decisions.design import ArmPlan, StagedDesign, arm_name, plan_arms
from tvrl_bench.decisions.outcome import decide_records, scaled_metric
from tvrl_bench.decisions.sequential import StageResult
from tvrl_bench.sweeps.plan import TrialSpec
from tvrl_bench.sweeps.study import Study


@dataclass
class StagePlan:
    """A staged study's design, arms, and its trials by arm and seed (base rows by seed: one per value of each axis
    in `sweeps.study.base`, e.g. one per critic)."""

    design: StagedDesign
    arms: ArmPlan
    trials: dict[str, dict[int, TrialSpec]]
    base: dict[int, list[TrialSpec]]
    study_file: str = ""

    def most_trials(self) -> int:
        """Trials of a grid of the most stages: every arm and base row on every stage's seeds."""
        return sum(len(by_seed) for by_seed in self.trials.values()) + sum(len(rows) for rows in self.base.values())

    def stage_trials(self, stage: int, open_arms: set[str] | None = None) -> list[TrialSpec]:
        """Stage `stage`'s trials: every arm at stage 1, else the open arms and the baselines they need."""
        seeds = self.design.stage_seeds(stage)
        if stage == 1 or open_arms is None:
            arms = list(self.trials)
        else:
            needed = {c.baseline for c in self.arms.comparisons if c.arm in open_arms}
            arms = [a for a in self.trials if a in open_arms or a in needed]
        specs = [spec for s in seeds for spec in self.base.get(s, [])]
        return specs + [self.trials[a][s] for a in arms for s in seeds if s in self.trials[a]]


def stage_plan(study: Study, trials: list[TrialSpec], study_file: str = "") -> StagePlan:
    """The staged plan of a study with `decide` (its trials: the whole grid of expand(), keys already computed)."""
    design = StagedDesign.from_study(study.decide, study.seeds)
    by_arm: dict[str, dict[int, TrialSpec]] = {}
    base: dict[int, list[TrialSpec]] = {}
    arms = []
    for spec in trials:
        if spec.seed not in design.seeds:
            continue
        if spec.base:
            base.setdefault(spec.seed, []).append(spec)
            continue
        arm = tuple((axis, preset_name(value)) for axis, value in spec.labels.items())
        if arm_name(arm) not in by_arm:
            arms.append(arm)
        by_arm.setdefault(arm_name(arm), {})[spec.seed] = spec
    baseline = {axis: preset_name(value) for axis, value in design.baseline.items()}
    return StagePlan(design, plan_arms(arms, baseline), by_arm, base, study_file)


def preset_name(value: str) -> str:
    """An axis value as the runs' params name it: a preset's name, or a preset file's stem."""
    return Path(value).stem if value.endswith(".gin") else value


def decide(plan: StagePlan, latest_finished, stages: int) -> list[StageResult]:
    """The test's results after each of the first `stages` stages, from the finished runs
    (`latest_finished(key)` -> run or None). ConfigError when finished trials exist and none logged the metric:
    a study deciding on it would stop with no decisions."""
    records, logged = [], set()
    for arm, by_seed in plan.trials.items():
        for seed, spec in by_seed.items():
            run = latest_finished(spec.key)
            if run is not None:
                records.append((arm, seed, scaled_metric(run.data.metrics, plan.design.metric)))
                logged.update(run.data.metrics)
    if records and all(value is None for *_, value in records):
        from tvrl_bench.config import ConfigError
        from tvrl_bench.sweeps.validate import value_line

        where = f"{plan.study_file}:{value_line(plan.study_file, 'decide', 'metric')}: " if plan.study_file else ""
        finals = sorted(m for m in logged if m.startswith(("eval/", "wide_eval/"))) or sorted(logged)
        raise ConfigError(
            f"{where}sweeps.study.decide['metric'] = {plan.design.metric!r}: none of the study's {len(records)} "
            f"finished trials logged it, so nothing can be decided; they logged {', '.join(finals) or 'no metric'}: "
            "set the metric to one of them and rerun (the finished trials are kept)")
    return decide_records(plan.design, plan.arms.comparisons, records, stages)
