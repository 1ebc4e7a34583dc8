"""Decisions from recorded values: the sweep (from its trials' runs) and the report (from MLflow's runs frame) both
turn (arm, seed, value) records into the test's stage results here, so they decide alike.

A record's value is the design's metric x 100 (a `wide_eval/` metric falls back to its `eval/` twin, as the
tables read it); a missing or non-finite value (a run that never logged it, or diverged) is left out. Each arm's
values are grouped by the stage its seed belongs to; an arm's stages end at the first stage with no value (its
trials there have not run), so a stage only counts where it ran.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

from tvrl_bench.decisions.design import StagedDesign
from tvrl_bench.decisions.sequential import Comparison, StageResult, staged_test


def scaled_metric(metrics: Mapping[str, float], metric: str) -> float | None:
    """`metric` x 100 from a run's metrics, else its `eval/` twin for a `wide_eval/` metric; None when absent or not
    finite."""
    value = metrics.get(metric)
    if (value is None or _nan(value)) and metric.startswith("wide_eval/"):
        value = metrics.get("eval/" + metric.removeprefix("wide_eval/"))
    if value is None or _nan(value):
        return None
    return 100.0 * float(value)


def _nan(value) -> bool:
    try:
        return not math.isfinite(float(value))
    except (TypeError, ValueError):
        return True


def decide_records(design: StagedDesign, comparisons: list[Comparison],
                   records: Iterable[tuple[str, int, float | None]], stages: int | None = None) -> list[StageResult]:
    """The test's result after each stage that ran, from (arm name, seed, value) records; `stages` caps the
    stages read (the sweep decides after stage k from stages 1..k only)."""
    last = min(stages or design.max_stages, design.max_stages)
    values: dict[str, list[list[float]]] = {}
    for arm, seed, value in records:
        stage = design.stage_of(seed)
        if stage is None or stage > last or value is None:
            continue
        values.setdefault(arm, [[] for _ in range(last)])[stage - 1].append(value)
    trimmed = {}
    for c in comparisons:
        for arm in (c.arm, c.baseline):
            kept = []
            for stage_values in values.get(arm, []):
                if not stage_values:
                    break
                kept.append(stage_values)
            trimmed[arm] = kept
    if any(not trimmed[c.baseline] for c in comparisons):
        return []
    return staged_test(trimmed, comparisons, design.alpha, design.max_stages, design.margin, design.permutations)
