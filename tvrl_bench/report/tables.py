"""Cells of runs and their statistics: a table definition plus a study's runs -> a TableResult to render.

A row is a filter on params (one value per `by` param, or a fixed row's filter); a value column adds its own
filter and names a metric. The runs passing both are the cell; its sample unit is the seed (see stats.py). A delta
column compares the cell of its `where` with the baseline cell (the same params with `baseline` applied).
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tvrl_bench.report.definitions import (
    CategoryColumns,
    DeltaColumn,
    Filter,
    MetricTable,
    ParamAxis,
    ValueColumn,
    natural_key,
)
from tvrl_bench.report.runs import StudyRuns
from tvrl_bench.report.stats import DeltaStat, ValueStat, paired_delta, value_stat, welch_delta

log = logging.getLogger(__name__)

# Params that name a study axis: a cell whose runs differ in one of them (and do not filter it) pools them, which
# the table's notes say (add the param to `by` or `where` to separate them).
AXIS_PARAMS = ("policy", "sampler", "reward", "credit", "method")


# ---- cells of a rendered table ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Blank:
    """Not applicable here (a delta on the baseline row, a GRPO column on a base row): rendered empty."""


@dataclass(frozen=True)
class Missing:
    """Expected but no data: rendered as a dash, with the reason in the warnings."""

    reason: str


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Count:
    value: int


@dataclass(frozen=True)
class Interval:
    """A confidence interval; marked when it contains `null` (or is undefined)."""

    low: float
    high: float
    null: float

    @property
    def excludes_null(self) -> bool:
        return bool(self.low > self.null or self.high < self.null)


Cell = ValueStat | DeltaStat | Number | Count | Interval | Blank | Missing

# Column kinds and the cell types they hold: value -> ValueStat, delta -> DeltaStat, number -> Number,
# count -> Count, interval -> Interval (any of them may be Blank or Missing).
KINDS = ("value", "delta", "number", "count", "interval")


@dataclass(frozen=True)
class Column:
    label: str
    kind: str


@dataclass
class Row:
    label: str
    cells: list[Cell]
    group: str | None = None

    def n_label(self) -> str:
        """Seeds per cell of this row: "3", or "2-3" when its cells differ, "0" when it has no data."""
        ns = sorted({c.n for c in self.cells if isinstance(c, ValueStat)})
        if not ns:
            return "0"
        return str(ns[0]) if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"


@dataclass
class CellRuns:
    """The runs of one cell (for plots): label, run ids and their seeds, ordered by seed."""

    label: str
    run_ids: list[str]
    seeds: list[str]


@dataclass
class TableResult:
    """A computed table: what every renderer (md, tex, html, csv) and the plots work from."""

    name: str
    kind: str
    study: str
    title: str
    caption: str
    row_header: str
    columns: list[Column]
    rows: list[Row]
    decimals: int = 2
    n_column: bool = True
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cells: list[CellRuns] = field(default_factory=list)

    def has_data(self) -> bool:
        return any(isinstance(c, (ValueStat, DeltaStat, Number, Count, Interval)) for r in self.rows for c in r.cells)


# ---- filters ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _RowSpec:
    label: str
    filter: Filter
    exclude: tuple[Filter, ...] = ()
    group: str | None = None


def match(frame: pd.DataFrame, flt: Filter) -> np.ndarray:
    """Boolean mask[len(frame)] of runs whose params take one of the accepted values for every filtered param."""
    mask = np.ones(len(frame), dtype=bool)
    for param, values in flt.items():
        column = f"params.{param}"
        if column not in frame.columns:
            return np.zeros(len(frame), dtype=bool)
        mask &= frame[column].isin(values).to_numpy()
    return mask


def intersect(a: Filter, b: Filter) -> Filter | None:
    """The filter accepting what both accept, or None when they contradict (disjoint values for a param)."""
    out = dict(a)
    for param, values in b.items():
        if param in out:
            common = tuple(v for v in out[param] if v in values)
            if not common:
                return None
            out[param] = common
        else:
            out[param] = values
    return out


def describe(flt: Filter) -> str:
    """'reward=videoalign, method=TVRL' (a list of values as 'a|b')."""
    return ", ".join(f"{k}={'|'.join(v)}" for k, v in flt.items()) or "(all runs)"


# ---- building a metrics table -------------------------------------------------------------------------------------


def build_metric_table(defn: MetricTable, runs: StudyRuns) -> TableResult:
    """Compute every cell of `defn` over the finished trials of `runs`."""
    trials = runs.trials
    keep = ["run_id"] + [c for c in trials.columns if c.startswith(("params.", "metrics."))]
    table_runs = trials.loc[match(trials, defn.where), keep]
    if "params.seed" in table_runs.columns:
        seeds = table_runs["params.seed"].fillna(table_runs["run_id"])
    else:
        seeds = table_runs["run_id"]
    table_runs = table_runs.assign(_seed=seeds.astype(str)).reset_index(drop=True)
    metric_names = sorted(c[len("metrics.") :] for c in table_runs.columns if c.startswith("metrics."))
    columns: list[ValueColumn | DeltaColumn] = []
    for col in defn.columns:
        columns.extend(col.expand(metric_names) if isinstance(col, CategoryColumns) else [col])
    unfinished = runs.unfinished
    unfinished = unfinished.loc[match(unfinished, defn.where)] if len(unfinished) else unfinished
    row_specs = _row_specs(defn, pd.concat([table_runs, unfinished], ignore_index=True) if len(unfinished) else table_runs)
    builder = _CellBuilder(table_runs, defn.scale, unfinished)
    rows, missing = [], []
    for spec in row_specs:
        cells: list[Cell] = []
        for col in columns:
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
        columns=[Column(c.label, "delta" if isinstance(c, DeltaColumn) else "value") for c in columns],
        rows=rows,
        decimals=defn.decimals,
    )
    result.warnings = _missing_warnings(defn.name, missing)
    pooled = [
        f"Cells pool runs that differ in {param} ({', '.join(sorted(values, key=natural_key))}); add it to [rows] by "
        "or to where in the table definition to separate them."
        for param, values in builder.pooled.items()
    ]
    result.notes = (
        _metric_notes(defn, columns, runs) + pooled + [f"Missing: {w.split(': ', 1)[1]}" for w in result.warnings]
    )
    result.cells = _cell_runs(row_specs, columns, builder)
    for w in result.warnings:
        log.warning("%s", w)
    return result


def _row_specs(defn: MetricTable, table_runs: pd.DataFrame) -> list[_RowSpec]:
    fixed_filters = tuple(r.where for r in defn.fixed_rows)
    first = [_RowSpec(r.label, r.where, (), f"fixed:{r.label}") for r in defn.fixed_rows if r.position == "first"]
    last = [_RowSpec(r.label, r.where, (), f"fixed:{r.label}") for r in defn.fixed_rows if r.position == "last"]
    product: list[_RowSpec] = []
    axes = defn.rows_by
    if axes:
        restricted = {a.name: a.values for a in axes if a.values is not None}
        pool = table_runs[match(table_runs, restricted)]
        for ex in fixed_filters:
            pool = pool[~match(pool, ex)]
        arranged = [a.arrange(_present(pool, a)) for a in axes]
        for combo in itertools.product(*arranged):
            labels = {a.name: a.label(v) for a, v in zip(axes, combo)}
            label = defn.row_label.format(**labels) if defn.row_label else " ".join(labels.values())
            group = combo[0] if len(axes) > 1 else None
            product.append(_RowSpec(label, {a.name: (v,) for a, v in zip(axes, combo)}, fixed_filters, group))
    return first + product + last


def _present(pool: pd.DataFrame, axis: ParamAxis) -> list[str]:
    column = f"params.{axis.name}"
    if column not in pool.columns:
        return []
    return [str(v) for v in pool[column].dropna().unique()]


class _CellBuilder:
    """Computes (and caches) the cells of one table's runs with numpy: a cell is a set of row indices."""

    def __init__(self, table_runs: pd.DataFrame, scale: float, unfinished: pd.DataFrame | None = None) -> None:
        self.runs = table_runs
        self.unfinished = unfinished if unfinished is not None else table_runs.iloc[:0]
        self.scale = scale
        self.metric_columns = [c for c in table_runs.columns if c.startswith("metrics.")]
        self.metric_index = {c: i for i, c in enumerate(self.metric_columns)}
        self.values = table_runs[self.metric_columns].to_numpy(dtype=float)  # [runs, metrics]
        self.seed_codes, self.seed_names = pd.factorize(table_runs["_seed"], sort=True)
        self.run_ids = table_runs["run_id"].to_numpy(dtype=object)
        self._masks: dict[tuple, np.ndarray] = {}
        self._rows: dict[tuple, np.ndarray] = {}
        self._per_seed: dict[tuple, np.ndarray] = {}
        self.pooled: dict[str, set[str]] = {}

    def _mask(self, flt: Filter) -> np.ndarray:
        key = _freeze(flt)
        if key not in self._masks:
            self._masks[key] = match(self.runs, flt)
        return self._masks[key]

    def rows(self, flt: Filter, exclude: tuple[Filter, ...]) -> np.ndarray:
        """Indices of the cell's runs."""
        key = (_freeze(flt), tuple(_freeze(e) for e in exclude))
        if key not in self._rows:
            mask = self._mask(flt).copy()
            for ex in exclude:
                mask &= ~self._mask(ex)
            self._rows[key] = np.flatnonzero(mask)
            if len(self._rows[key]):
                self._note_pooling(self._rows[key], flt)
        return self._rows[key]

    def per_seed(self, flt: Filter, exclude: tuple[Filter, ...]) -> np.ndarray:
        """[seeds of the cell, metrics]: the mean of the cell's runs of each seed (NaN where none logged it)."""
        key = (_freeze(flt), tuple(_freeze(e) for e in exclude))
        if key not in self._per_seed:
            rows = self.rows(flt, exclude)
            _, inverse = np.unique(self.seed_codes[rows], return_inverse=True)
            values = self.values[rows]
            logged = ~np.isnan(values)
            sums = np.zeros((inverse.max(initial=-1) + 1, values.shape[1]))
            counts = np.zeros_like(sums)
            np.add.at(sums, inverse, np.where(logged, values, 0.0))
            np.add.at(counts, inverse, logged)
            with np.errstate(invalid="ignore", divide="ignore"):
                self._per_seed[key] = sums / counts
        return self._per_seed[key]

    def stat(self, flt: Filter, exclude: tuple[Filter, ...], metric: str) -> ValueStat | Missing:
        if not len(self.rows(flt, exclude)):
            return Missing(f"no finished runs with {describe(flt)}{self.unfinished_note(flt, exclude)}")
        column = self.metric_index.get(f"metrics.{metric}")
        per_seed = self.per_seed(flt, exclude)[:, column] if column is not None else np.empty(0)
        per_seed = per_seed[~np.isnan(per_seed)]
        if not per_seed.size:
            return Missing(f"runs with {describe(flt)} have no metric '{metric}'")
        return value_stat(per_seed * self.scale)

    def unfinished_note(self, flt: Filter, exclude: tuple[Filter, ...]) -> str:
        """' (FAILED 2, KILLED 1)': the cell's trial runs that never finished, by status ('' when none)."""
        if not len(self.unfinished):
            return ""
        mask = match(self.unfinished, flt)
        for ex in exclude:
            mask &= ~match(self.unfinished, ex)
        if not mask.any():
            return ""
        counts = self.unfinished.loc[mask, "status"].value_counts().sort_index()
        return " (" + ", ".join(f"{status} {int(n)}" for status, n in counts.items()) + ")"

    def cell_runs(self, flt: Filter, exclude: tuple[Filter, ...]) -> tuple[list[str], list[str]]:
        """(run ids, seeds) of the cell, ordered by seed."""
        rows = self.rows(flt, exclude)
        seeds = [str(self.seed_names[c]) for c in self.seed_codes[rows]]
        order = sorted(range(len(rows)), key=lambda i: _seed_key(seeds[i]))
        return [str(self.run_ids[rows[i]]) for i in order], [seeds[i] for i in order]

    def _note_pooling(self, rows: np.ndarray, flt: Filter) -> None:
        for param in AXIS_PARAMS:
            column = f"params.{param}"
            if column in self.runs.columns and (param not in flt or len(flt[param]) > 1):
                values = {str(v) for v in pd.unique(self.runs[column].to_numpy(dtype=object)[rows]) if pd.notna(v)}
                if len(values) > 1:
                    self.pooled.setdefault(param, set()).update(values)

    def value(self, spec: _RowSpec, col: ValueColumn) -> Cell:
        flt = intersect(spec.filter, col.where)
        if flt is None:
            return Blank()
        return self.stat(flt, spec.exclude, col.metric)

    def delta(self, spec: _RowSpec, col: DeltaColumn) -> Cell:
        treated = intersect(spec.filter, col.where)
        if treated is None:
            return Blank()
        baseline = dict(treated)
        baseline.update({k: (v,) for k, v in col.baseline.items()})
        if baseline == treated:
            return Blank()
        t = self.stat(treated, spec.exclude, col.metric)
        b = self.stat(baseline, spec.exclude, col.metric)
        if isinstance(t, Missing):
            return t
        if isinstance(b, Missing):
            return Missing(f"baseline: {b.reason}")
        if col.paired:
            return paired_delta(self.seed_values(treated, spec.exclude, col.metric), self.seed_values(baseline, spec.exclude, col.metric))
        return welch_delta(t, b)

    def seed_values(self, flt: Filter, exclude: tuple[Filter, ...], metric: str) -> dict[str, float]:
        """{seed: the cell's value of `metric` for that seed (scaled)}, for seeds that logged it."""
        rows = self.rows(flt, exclude)
        column = self.metric_index.get(f"metrics.{metric}")
        if column is None:
            return {}
        codes = np.unique(self.seed_codes[rows])
        values = self.per_seed(flt, exclude)[:, column]
        return {str(self.seed_names[c]): float(v) * self.scale for c, v in zip(codes, values) if not np.isnan(v)}


def _freeze(flt: Filter) -> tuple:
    return tuple(sorted(flt.items()))


def _missing_warnings(table: str, missing: list[tuple[str, str, str]]) -> list[str]:
    grouped: dict[tuple[str, str], list[str]] = {}
    for row, col, reason in missing:
        grouped.setdefault((row, reason), []).append(col)
    return [
        f"table '{table}': row '{row}' ({', '.join(cols)}): {reason}" for (row, reason), cols in grouped.items()
    ]


def _metric_notes(defn: MetricTable, columns: list[ValueColumn | DeltaColumn], runs: StudyRuns) -> list[str]:
    scale = f"×{defn.scale:g}, " if defn.scale != 1 else ""
    notes = [
        f"Cells: mean ± std over seeds ({scale}{defn.decimals} decimals); n: seeds per cell "
        "(a range when the row's cells differ)."
    ]
    deltas = [c for c in columns if isinstance(c, DeltaColumn)]
    for d in deltas:
        treated = describe(d.where) if d.where else "each row"
        base = ", ".join(f"{k}={v}" for k, v in d.baseline.items())
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
    if status := runs.status_note():
        notes.append(status)
    notes.extend(n[:1].upper() + n[1:] + "." for n in runs.notes)
    return notes


def _cell_runs(
    specs: list[_RowSpec], columns: list[ValueColumn | DeltaColumn], builder: _CellBuilder
) -> list[CellRuns]:
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


def _seed_key(seed: str) -> tuple:
    try:
        return (0, float(seed), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(seed))
