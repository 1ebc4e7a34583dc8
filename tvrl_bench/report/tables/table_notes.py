"""The notes and warnings under a metrics table: what its cells are, each delta's definition, runs that diverged,
cells that pair prompts, and the cells with no data."""

from __future__ import annotations

import pandas as pd

from tvrl_bench.report.runs.frames import logged_nan
from tvrl_bench.report.runs.study import StudyRuns
from tvrl_bench.report.tables.cell_builder import CellBuilder
from tvrl_bench.report.tables.definition_types import ANY, DeltaColumn, HalfGainColumn, MetricTable, ValueColumn
from tvrl_bench.report.tables.filters import describe
from tvrl_bench.report.tables.half_gain import note as half_gain_note


def missing_warnings(table: str, missing: list[tuple[str, str, str]]) -> list[str]:
    grouped: dict[tuple[str, str], list[str]] = {}
    for row, col, reason in missing:
        grouped.setdefault((row, reason), []).append(col)
    return [
        f"table '{table}': row '{row}' ({', '.join(cols)}): {reason}" for (row, reason), cols in grouped.items()
    ]


def diverged_notes(table_runs: pd.DataFrame, columns: list, logged_as=lambda metric: metric) -> list[str]:
    """A note per metric the columns read that some runs logged as NaN: they diverged, and their cells leave them
    out (a cell with no other run says so); `logged_as` names the metric as the runs logged it (the fallback reads
    wide_eval/X from eval/X)."""
    notes = []
    for metric in dict.fromkeys(c.metric for c in columns if getattr(c, "metric", None)):
        diverged = int(logged_nan(table_runs, metric).sum())
        if diverged:
            notes.append(f"Diverged: {diverged} run{'s' if diverged != 1 else ''} logged {logged_as(metric)} as NaN; left out of "
                         "its cells.")
    return notes


def prompt_notes(builder: CellBuilder) -> list[str]:
    return [
        f"{label}: where a cell has one seed, its [95% CI] pairs the {n} prompts of that seed's evaluation instead "
        "(per-prompt score: the mean of the prompt's category accuracies): it says how sure the delta is for that "
        "seed, not across seeds."
        for label, n in builder.prompt_paired.items()
    ]


def metric_notes(defn: MetricTable, columns: list[ValueColumn | DeltaColumn | HalfGainColumn],
                  runs: StudyRuns) -> list[str]:
    scale = f"×{defn.scale:g}, " if defn.scale != 1 else ""
    notes = [
        f"Cells: mean ± std over seeds ({scale}{defn.decimals} decimals); n: seeds per cell "
        "(a range when the row's cells differ)."
    ]
    deltas = [c for c in columns if isinstance(c, DeltaColumn)]
    for d in deltas:
        treated = describe(d.where) if d.where else "each row"
        base = ", ".join(f"{k}={v}" if v != ANY else f"any {k}" for k, v in d.baseline.items())
        if d.paired:
            notes.append(
                f"{d.label}: {d.metric}, {treated} minus {base} (other params equal) seed by seed, averaged over the "
                "seeds both have; [95% CI] paired t-interval of that mean."
            )
        else:
            notes.append(
                f"{d.label}: difference of means of {d.metric}, {treated} minus {base} (other params equal); "
                "[95% CI] Welch t-interval over seeds."
            )
    if deltas:
        notes.append(
            "† the 95% CI includes 0 (or is undefined, with fewer than 2 seeds on a side): "
            "not distinguishable from seed noise."
        )
    notes.extend(half_gain_note(c) for c in columns if isinstance(c, HalfGainColumn))
    if status := runs.status_note():
        notes.append(status)
    notes.extend(n[:1].upper() + n[1:] + "." for n in runs.notes)
    return notes
