"""The metrics table: a MetricTable definition plus a study's runs -> a TableResult to render.

A row is a filter on params (one value per `by` param, or a fixed row's filter); a value column adds its own
filter and names a metric. The runs passing both are the cell (cell_builder.py computes it); its sample unit is
the seed (see report/stats/intervals.py). A delta column compares the cell of its `where` with the baseline cell
(the same params with `baseline` applied).
"""

from __future__ import annotations

import itertools
import logging

import pandas as pd

from tvrl_bench.report.runs.decisions import study_decisions
from tvrl_bench.report.runs.frames import NAN_METRICS
from tvrl_bench.report.runs.study import StudyRuns
from tvrl_bench.report.tables.cell_builder import CellBuilder, PromptScores, RowSpec
from tvrl_bench.report.tables.decision_cells import decision_cell, decision_note
from tvrl_bench.report.tables.definition_types import (ANY, CategoryColumns, DecisionColumn, DeltaColumn, Filter,
                                                       HalfGainColumn, MetricTable, ParamAxis, ValueColumn, natural_key)
from tvrl_bench.report.tables.filters import describe, intersect, match
from tvrl_bench.report.tables.half_gain import Histories, half_gain_cell
from tvrl_bench.report.tables.table_notes import diverged_notes, metric_notes, missing_warnings, prompt_notes
from tvrl_bench.report.tables.table_result import Cell, CellRuns, Column, Missing, Row, TableResult

log = logging.getLogger(__name__)


def build_metric_table(defn: MetricTable, runs: StudyRuns, histories: Histories | None = None,
                       prompt_scores: PromptScores | None = None) -> TableResult:
    """Compute every cell of `defn` over the finished trials of `runs` (`histories`: metric histories by run, for
    steps-to-half-gain columns; `prompt_scores`: per-video scores by run, for one-seed paired deltas over prompts,
    cell_builder.py)."""
    trials = runs.trials
    keep = ["run_id"] + [c for c in trials.columns if c.startswith(("params.", "metrics.")) or c == NAN_METRICS]
    table_runs = trials.loc[match(trials, defn.where), keep]
    if "params.seed" in table_runs.columns:
        seeds = table_runs["params.seed"].fillna(table_runs["run_id"])
    else:
        seeds = table_runs["run_id"]
    table_runs = table_runs.assign(_seed=seeds.astype(str)).reset_index(drop=True)
    table_runs, fallback = with_wide_fallback(table_runs, defn)
    metric_names = sorted(c[len("metrics.") :] for c in table_runs.columns if c.startswith("metrics."))
    decisions = study_decisions(runs) if any(isinstance(c, DecisionColumn) for c in defn.columns) else None
    columns: list[ValueColumn | DeltaColumn | HalfGainColumn | DecisionColumn] = []
    left_out: list[str] = []
    for col in defn.columns:
        if isinstance(col, DecisionColumn) and decisions is None:
            continue  # a study without staged decisions: no column it cannot fill
        if isinstance(col, DeltaColumn) and col.optional and not _has_baseline(table_runs, col):
            left_out.append(f"{col.label}: left out, no run of {describe(_baseline_filter(col))} in this study.")
            continue
        columns.extend(col.expand(metric_names) if isinstance(col, CategoryColumns) else [col])
    unfinished = runs.unfinished
    unfinished = unfinished.loc[match(unfinished, defn.where)] if len(unfinished) else unfinished
    row_specs = _row_specs(defn, pd.concat([table_runs, unfinished], ignore_index=True) if len(unfinished) else table_runs)
    builder = CellBuilder(table_runs, defn.scale, unfinished, prompt_scores,
                          {WIDE.rstrip("/"): OWN.rstrip("/")} if fallback else None)
    rows, missing = [], []
    for spec in row_specs:
        cells: list[Cell] = []
        for col in columns:
            if isinstance(col, DecisionColumn):
                cell = decision_cell(builder, spec, col, decisions)
            elif isinstance(col, HalfGainColumn):
                cell = half_gain_cell(builder, spec, col, histories)
            else:
                cell = builder.delta(spec, col) if isinstance(col, DeltaColumn) else builder.value(spec, col)
            if isinstance(cell, Missing):
                missing.append((spec.label, col.label, cell.reason))
            cells.append(cell)
        rows.append(Row(spec.label, cells, spec.group))
    result = TableResult(
        name=defn.name,
        kind="metrics",
        study=runs.study,
        title=defn.title,
        caption=defn.caption,
        row_header=defn.row_header,
        columns=[Column(c.label, _kind(c)) for c in columns],
        rows=rows,
        decimals=defn.decimals,
    )
    result.warnings = missing_warnings(defn.name, missing)
    pooled = [
        f"Cells pool runs that differ in {param} ({', '.join(sorted(values, key=natural_key))}); add it to [rows] by "
        "or to where in the table definition to separate them."
        for param, values in builder.pooled.items()
    ]
    result.pooled = _pooled_rows(row_specs, columns, builder)
    result.notes = (
        metric_notes(defn, columns, runs)
        + [decision_note(decisions, c.label) for c in columns if isinstance(c, DecisionColumn)]
        + left_out + fallback + prompt_notes(builder) + pooled
        + diverged_notes(table_runs, columns, builder.logged_as) + [f"Missing: {w.split(': ', 1)[1]}" for w in result.warnings]
    )
    result.cells = _cell_runs(row_specs, columns, builder)
    for w in result.warnings:
        log.warning("%s", w)
    return result


def _pooled_rows(specs: list[RowSpec], columns: list, builder: CellBuilder) -> dict[str, list[str]]:
    """{param: values} the cells of the rows made from the table's `by` params pool: arms the table does not show,
    so it states no answer (a fixed row, such as the base model's, pools what its author chose to)."""
    found: dict[str, set[str]] = {}
    for spec in (s for s in specs if not (s.group or "").startswith("fixed:")):
        for col in (c for c in columns if isinstance(c, (ValueColumn, DeltaColumn))):
            flt = intersect(spec.filter, col.where)
            for param, values in (builder.pooled_in(flt, spec.exclude) if flt is not None else {}).items():
                found.setdefault(param, set()).update(values)
    return {param: sorted(values, key=natural_key) for param, values in found.items()}


def _baseline_filter(col: DeltaColumn) -> Filter:
    return {k: (v,) for k, v in col.baseline.items() if v != ANY}


def _has_baseline(table_runs: pd.DataFrame, col: DeltaColumn) -> bool:
    return bool(match(table_runs, _baseline_filter(col)).any())


def _kind(column) -> str:
    return "delta" if isinstance(column, DeltaColumn) else "text" if isinstance(column, DecisionColumn) else "value"


def _row_specs(defn: MetricTable, table_runs: pd.DataFrame) -> list[RowSpec]:
    """The rows of `defn` in display order: fixed "first" rows, one per combination of the `by` values present in
    table_runs (a runs frame with params.<name> columns; with `only_run`, the combinations some run has), fixed
    "last" rows."""
    fixed_filters = tuple(r.where for r in defn.fixed_rows)
    first = [RowSpec(r.label, r.where, (), f"fixed:{r.label}") for r in defn.fixed_rows if r.position == "first"]
    last = [RowSpec(r.label, r.where, (), f"fixed:{r.label}") for r in defn.fixed_rows if r.position == "last"]
    product: list[RowSpec] = []
    axes = defn.rows_by
    if axes:
        restricted = {a.name: a.values for a in axes if a.values is not None}
        pool = table_runs[match(table_runs, restricted)]
        for ex in fixed_filters:
            pool = pool[~match(pool, ex)]
        arranged = [a.arrange(_present(pool, a)) for a in axes]
        for combo in itertools.product(*arranged):
            if defn.only_run and not match(pool, {a.name: (v,) for a, v in zip(axes, combo)}).any():
                continue  # a combination the study never ran (e.g. the null control with one credit only)
            labels = {a.name: a.label(v) for a, v in zip(axes, combo)}
            label = defn.row_label.format(**labels) if defn.row_label else " ".join(labels.values())
            group = combo[0] if len(axes) > 1 else None
            product.append(RowSpec(label, {a.name: (v,) for a, v in zip(axes, combo)}, fixed_filters, group))
    return first + product + last


def _present(pool: pd.DataFrame, axis: ParamAxis) -> list[str]:
    column = f"params.{axis.name}"
    if column not in pool.columns:
        return []
    return [str(v) for v in pool[column].dropna().unique()]


WIDE, OWN = "wide_eval/", "eval/"


def with_wide_fallback(table_runs: pd.DataFrame, defn: MetricTable) -> tuple[pd.DataFrame, list[str]]:
    """Tables read the wide evaluation (`wide_eval/*`, logged by trials with training.trial.wide_eval_prompts and
    by `tvrl-bench wide-eval`). When none of the table's runs logged one (real models, whose evaluation is their
    whole benchmark, or studies run without it), its `wide_eval/X` metrics are read from `eval/X` instead, and the
    returned note says so. (runs with metrics.wide_eval/* columns added where they fall back, notes)"""
    columns = [c for c in table_runs.columns if c.startswith("metrics.")]
    asks_wide = any(m.startswith(WIDE) for m in _named_metrics(defn))
    if not asks_wide or any(c.startswith("metrics." + WIDE) for c in columns) or not len(table_runs):
        return table_runs, []
    own = {c: "metrics." + WIDE + c[len("metrics." + OWN):] for c in columns if c.startswith("metrics." + OWN)}
    if not own:
        return table_runs, []
    copied = table_runs.assign(**{wide: table_runs[c] for c, wide in own.items()})
    if NAN_METRICS in copied.columns:  # a NaN eval/X diverged, and so does the wide_eval/X read from it
        renamed = {c[len("metrics."):]: wide[len("metrics."):] for c, wide in own.items()}
        copied[NAN_METRICS] = copied[NAN_METRICS].map(
            lambda names: names + tuple(renamed[n] for n in names if n in renamed) if isinstance(names, tuple) else names)
    return copied, ["No run logged a wide evaluation (wide_eval/*): the table reads each trial's own evaluation (eval/*)."]


def _named_metrics(defn: MetricTable) -> list[str]:
    """Every metric (or metric prefix) the table's columns name."""
    names = []
    for col in defn.columns:
        names.append(col.prefix if isinstance(col, CategoryColumns) else getattr(col, "metric", ""))
    return names


def _cell_runs(
    specs: list[RowSpec], columns: list[ValueColumn | DeltaColumn | HalfGainColumn], builder: CellBuilder
) -> list[CellRuns]:
    """The runs of every (row, value-column filter) cell that has runs, for the plots."""
    wheres: list[tuple[Filter, str]] = []
    for col in columns:
        if isinstance(col, ValueColumn) and all(col.where != w for w, _ in wheres):
            wheres.append((col.where, col.label))
    cells = []
    for spec in specs:
        for where, col_label in wheres:
            flt = intersect(spec.filter, where)
            if flt is None:
                continue
            run_ids, seeds = builder.cell_runs(flt, spec.exclude)
            if run_ids:
                label = spec.label if len(wheres) == 1 else f"{spec.label} {col_label}"
                cells.append(CellRuns(label, run_ids, seeds))
    return cells
