"""The cells of a metrics table: the runs a row and a column select, their per-seed means and statistics.

A cell is the set of runs passing the row's filter (less its excluded filters) and the column's; its sample unit
is the seed: the runs of one seed are averaged first, then the mean ± std is over seeds (see
report/stats/intervals.py). A delta compares the cell of its `where` with the baseline cell (the same params with
`baseline` applied). A paired delta
whose cells share one seed, one run each, pairs the prompts of that seed's evaluation instead, where the runs
logged per-video scores (`prompt_scores`) and the metric is an `overall`: the mean per-prompt difference of the
records' `score` (each prompt's mean over its categories), with the t-interval over prompts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from tvrl_bench.report.runs.frames import logged_nan
from tvrl_bench.report.runs.one_config import axis_params
from tvrl_bench.report.stats.intervals import DeltaStat, ValueStat, paired_delta, value_stat, welch_delta
from tvrl_bench.report.tables.definition_types import ANY, DeltaColumn, Filter, ValueColumn
from tvrl_bench.report.tables.filters import describe, intersect, match
from tvrl_bench.report.tables.table_result import Blank, Cell, Missing


# (run id, "eval" or "wide_eval") -> {(index, prompt): score} of that evaluation's per-video records, or None
PromptScores = Callable[[str, str], "dict[tuple[int, str], float] | None"]


@dataclass(frozen=True)
class RowSpec:
    """One row of a metrics table: its label, the filter its runs pass and the filters they must not pass."""

    label: str
    filter: Filter
    exclude: tuple[Filter, ...] = ()
    group: str | None = None


class CellBuilder:
    """Computes (and caches) the cells of one table's runs with numpy: a cell is a set of row indices.

    table_runs: finished runs, one row each, with columns run_id, _seed (the seed as text), params.<name> and
    metrics.<name>; unfinished: the table's trial runs that never finished (columns status, params.<name>).
    """

    def __init__(self, table_runs: pd.DataFrame, scale: float, unfinished: pd.DataFrame | None = None,
                 prompt_scores: PromptScores | None = None, record_prefixes: dict[str, str] | None = None) -> None:
        self.runs = table_runs
        self.prompt_scores = prompt_scores
        self.record_prefixes = record_prefixes or {}  # metric prefix -> the records read for it (a fallback)
        self.prompt_paired: dict[str, int] = {}  # delta column label -> prompts its one-seed cells paired
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
            for param, values in self.pooled_in(flt, exclude).items() if len(self._rows[key]) else ():
                self.pooled.setdefault(param, set()).update(values)
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
        """Mean ± std over seeds of the cell's `metric` (scaled), or Missing with the reason."""
        if not len(self.rows(flt, exclude)):
            return Missing(f"no finished runs with {describe(flt)}{self.unfinished_note(flt, exclude)}")
        column = self.metric_index.get(f"metrics.{metric}")
        per_seed = self.per_seed(flt, exclude)[:, column] if column is not None else np.empty(0)
        per_seed = per_seed[~np.isnan(per_seed)]
        if not per_seed.size:
            diverged = int(logged_nan(self.runs.iloc[self.rows(flt, exclude)], metric).sum())
            if diverged:
                return Missing(f"runs with {describe(flt)} diverged: {diverged} logged '{self.logged_as(metric)}' as NaN")
            return Missing(f"runs with {describe(flt)} have no metric '{metric}'")
        return value_stat(per_seed * self.scale)

    def logged_as(self, metric: str) -> str:
        """The name a run logged `metric` under: its `eval/` twin where the table reads `wide_eval/` from it."""
        prefix, _, rest = metric.partition("/")
        return f"{self.record_prefixes[prefix]}/{rest}" if rest and prefix in self.record_prefixes else metric

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

    def pooled_in(self, flt: Filter, exclude: tuple[Filter, ...] = ()) -> dict[str, set[str]]:
        """{param: values} for each arm param (one_config.axis_params) the cell's runs differ in and its filter does
        not fix: the cell averages those arms seed by seed, which the table's notes (and answer) say."""
        rows, found = self.rows(flt, exclude), {}
        for param in axis_params():
            column = f"params.{param}"
            if column in self.runs.columns and (param not in flt or len(flt[param]) > 1):
                values = {str(v) for v in pd.unique(self.runs[column].to_numpy(dtype=object)[rows]) if pd.notna(v)}
                if len(values) > 1:
                    found[param] = values
        return found

    def value(self, spec: RowSpec, col: ValueColumn) -> Cell:
        """The cell of a value column in row `spec` (Blank when their filters contradict)."""
        flt = intersect(spec.filter, col.where)
        if flt is None or _fixed_only(flt, spec.exclude):
            return Blank()
        return self.stat(flt, spec.exclude, col.metric)

    def delta(self, spec: RowSpec, col: DeltaColumn) -> Cell:
        """The cell of a delta column in row `spec`: treated minus baseline (Blank on the baseline itself)."""
        treated = intersect(spec.filter, col.where)
        if treated is None:
            return Blank()
        baseline = dict(treated)
        baseline.update({k: (v,) for k, v in col.baseline.items()})
        baseline = {k: v for k, v in baseline.items() if v != (ANY,)}  # `*`: any value of that param
        if baseline == treated:
            return Blank()
        # a baseline that selects a fixed row's runs (the base model) compares with them: not excluded from it
        kept = tuple(ex for ex in spec.exclude if not _within(baseline, ex))
        t = self.stat(treated, spec.exclude, col.metric)
        b = self.stat(baseline, kept, col.metric)
        if isinstance(t, Missing):
            return t
        if isinstance(b, Missing):
            return Missing(f"baseline: {b.reason}")
        if col.paired:
            by_seed = paired_delta(self.seed_values(treated, spec.exclude, col.metric),
                                   self.seed_values(baseline, kept, col.metric))
            if by_seed.n_treated == 1:
                by_prompt = self.prompt_delta(treated, spec.exclude, baseline, kept, col)
                if by_prompt is not None:
                    return by_prompt
            return by_seed
        return welch_delta(t, b)

    def prompt_delta(self, treated: Filter, t_exclude: tuple[Filter, ...], baseline: Filter,
                     b_exclude: tuple[Filter, ...], col: DeltaColumn) -> DeltaStat | None:
        """The one-seed paired delta over prompts (module docstring), or None where it does not apply."""
        prefix, _, name = col.metric.partition("/")
        if self.prompt_scores is None or name != "overall":
            return None
        t_runs, t_seeds = self.cell_runs(treated, t_exclude)
        b_runs, b_seeds = self.cell_runs(baseline, b_exclude)
        shared = set(t_seeds) & set(b_seeds)
        if len(shared) != 1 or t_seeds.count(next(iter(shared))) != 1 or b_seeds.count(next(iter(shared))) != 1:
            return None
        seed = next(iter(shared))
        prefix = self.record_prefixes.get(prefix, prefix)
        t_scores = self.prompt_scores(t_runs[t_seeds.index(seed)], prefix)
        b_scores = self.prompt_scores(b_runs[b_seeds.index(seed)], prefix)
        if not t_scores or not b_scores:
            return None
        stat = paired_delta({str(k): v * self.scale for k, v in t_scores.items()},
                            {str(k): v * self.scale for k, v in b_scores.items()})
        if stat.n_treated < 2:
            return None
        self.prompt_paired[col.label] = max(self.prompt_paired.get(col.label, 0), stat.n_treated)
        return stat

    def seed_values(self, flt: Filter, exclude: tuple[Filter, ...], metric: str) -> dict[str, float]:
        """{seed: the cell's value of `metric` for that seed (scaled)}, for seeds that logged it."""
        rows = self.rows(flt, exclude)
        column = self.metric_index.get(f"metrics.{metric}")
        if column is None:
            return {}
        codes = np.unique(self.seed_codes[rows])
        values = self.per_seed(flt, exclude)[:, column]
        return {str(self.seed_names[c]): float(v) * self.scale for c, v in zip(codes, values) if not np.isnan(v)}


def _fixed_only(flt: Filter, exclude: tuple[Filter, ...]) -> bool:
    """True when every run `flt` accepts belongs to the excluded fixed rows (a column of the base and null rows in a
    sampler's row): all of some param's accepted values are excluded by one-param filters."""
    covered: dict[str, set] = {}
    for ex in exclude:
        if len(ex) == 1:
            (param, values), = ex.items()
            covered.setdefault(param, set()).update(values)
    return any(p in covered and set(values) <= covered[p] for p, values in flt.items())


def _within(flt: Filter, other: Filter) -> bool:
    """True when every run `flt` accepts passes `other` too (flt restricts each of other's params to its values)."""
    return all(p in flt and set(flt[p]) <= set(values) for p, values in other.items())


def _freeze(flt: Filter) -> tuple:
    return tuple(sorted(flt.items()))


def _seed_key(seed: str) -> tuple:
    try:
        return (0, float(seed), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(seed))
