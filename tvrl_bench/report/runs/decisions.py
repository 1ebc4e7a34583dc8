"""A staged study's decisions recomputed from MLflow alone: the design its parent run records (`tvrl.decide`) and
its finished trial runs (their axis params, seed and metric), through the same test as the sweep.

`study_decisions(runs)` is None for a study without staged decisions. The tables' decision column
(report/tables/metric_table.py) and the study page's decisions panel read it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from tvrl_bench.decisions.design import ArmPlan, StagedDesign, arm_name, plan_arms
from tvrl_bench.decisions.outcome import decide_records, scaled_metric
from tvrl_bench.decisions.sequential import StageResult, Verdict
from tvrl_bench.report.runs.study import StudyRuns

DECIDE_TAG = "tvrl.decide"


@dataclass
class StudyDecisions:
    """The design, the arms (by name) and the test's result after each stage that ran."""

    design: StagedDesign
    arms: ArmPlan
    axes: tuple[str, ...]
    results: list[StageResult]

    def verdict(self, arm: str) -> Verdict | None:
        """The last stage's verdict of the comparison whose arm is `arm` (None for a baseline or control)."""
        if not self.results:
            return None
        return next((v for v in self.results[-1].verdicts if v.comparison.arm == arm), None)

    def text(self, arm: str) -> str:
        """A table cell's words for an arm: its verdict and stage, "baseline", "control", or "pending" before the first
        stage has run for every comparison."""
        verdict = self.verdict(arm)
        if verdict is not None:
            word = f"within ±{self.design.margin:g}" if verdict.verdict == "within" else verdict.verdict
            return f"{word}, stage {verdict.stage}"
        if arm in self.arms.baselines:
            return "baseline"
        if arm in self.arms.controls:
            return "control"
        return "pending" if not self.results else ""

    def arm_of(self, params: dict[str, str]) -> str | None:
        """The arm name of a run's params (its axis values), or None when a study axis is missing."""
        if any(params.get(axis) is None for axis in self.axes):
            return None
        return arm_name(tuple((axis, str(params[axis])) for axis in self.axes))


def study_decisions(runs: StudyRuns) -> StudyDecisions | None:
    """The study's decisions from its runs, or None when its parent run records no staged design."""
    tag = (runs.parent or {}).get("tags", {}).get(DECIDE_TAG)
    if not tag:
        return None
    record = json.loads(tag)
    fields = {k: record[k] for k in ("alpha", "seeds_per_stage", "max_stages", "margin", "metric", "permutations")}
    design = StagedDesign(dict(record["baseline"]), seeds=tuple(record["seeds"]), **fields)
    arms = [tuple(tuple(part.split("=", 1)) for part in name.split(" ")) for name in record["arms"]]
    axes = tuple(axis for axis, _ in arms[0]) if arms else ()
    plan = plan_arms(arms, design.baseline)
    decisions = StudyDecisions(design, plan, axes, [])
    trials = runs.trials
    metric_columns = [c for c in trials.columns if c.startswith("metrics.")]
    records = []
    for _, row in trials.iterrows():
        params = {axis: row.get(f"params.{axis}") for axis in axes}
        if row.get("params.method") == "base" or row.get("params.seed") is None:
            continue
        arm = decisions.arm_of(params)
        seed = _seed(row.get("params.seed"))
        if arm is None or seed is None:
            continue
        metrics = {c[len("metrics."):]: row[c] for c in metric_columns if not _missing(row[c])}
        records.append((arm, seed, scaled_metric(metrics, design.metric)))
    decisions.results = decide_records(design, plan.comparisons, records)
    return decisions


def _seed(value) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
