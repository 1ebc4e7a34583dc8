"""The decision column's cells: for each row, the staged decision of the arm its runs belong to.

A row's cell selects its runs like a value column (the row's filter and the column's `where`); when they are all
runs of one arm of the study, the cell is that arm's decision (report/runs/decisions.py: "larger, stage 1",
"within ±5, stage 3", "open, stage 2", "baseline", "control"); otherwise (a base row, a row pooling arms) it is
blank. A study without staged decisions has no decision column at all.
"""

from __future__ import annotations

from tvrl_bench.report.runs.decisions import StudyDecisions
from tvrl_bench.report.tables.cell_builder import CellBuilder, RowSpec
from tvrl_bench.report.tables.definition_types import DecisionColumn
from tvrl_bench.report.tables.filters import intersect
from tvrl_bench.report.tables.table_result import Blank, Cell, Text


def decision_cell(builder: CellBuilder, spec: RowSpec, column: DecisionColumn, decisions: StudyDecisions) -> Cell:
    flt = intersect(spec.filter, column.where)
    if flt is None:
        return Blank()
    indices = builder.rows(flt, spec.exclude)
    runs = builder.runs.iloc[indices]
    if "params.method" in runs.columns:
        runs = runs[runs["params.method"] != "base"]
    arms = {decisions.arm_of({axis: _param(row, axis) for axis in decisions.axes}) for _, row in runs.iterrows()}
    arms.discard(None)
    if len(arms) != 1:
        return Blank()
    text = decisions.text(arms.pop())
    return Text(text) if text else Blank()


def _param(row, axis: str):
    value = row.get(f"params.{axis}")
    return None if value is None or (isinstance(value, float) and value != value) else str(value)


def decision_note(decisions: StudyDecisions, label: str) -> str:
    """The table note that says what the decision column holds."""
    d = decisions.design
    within = f", within ±{d.margin:g}: no difference of {d.margin:g} points or more" if d.margin > 0 else ""
    compared = len(d.seeds) and len(decisions.arms.comparisons)
    return (f"{label}: the staged decision on {d.metric} (group-sequential permutation test, family-wise error "
            f"{d.alpha:g} over {compared} comparisons and at most {d.max_stages} stages of {d.seeds_per_stage} seeds; "
            f"larger / smaller{within}; open: not yet decided; undecided: the stages ran out) and the stage that "
            "decided it (docs/sweeps.md#staged-decisions).")
