"""The "steps to half gain" column: how fast a run learns, from its evaluation curve.

Definition, per run: read the metric's history (values by step; a trial with `training.trial.eval_every` set
evaluates before training, every `eval_every` steps and at the end). With v(s) the value logged at step s, s0 the
first step logged (0: the evaluation before training) and sF the last, the final gain is G = v(sF) - v(s0).
Steps to half gain is the first logged step s with v(s) - v(s0) >= G / 2. It is undefined (the run is left out)
when the run logged the metric at fewer than two steps or its final gain is not positive. A cell averages its runs
of a seed, then shows the mean ± std over seeds (unscaled steps; n counts the seeds with a value). The steps
resolve to the evaluation interval: with evaluations every 20 steps a run's value is 20, 40, ...
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pandas as pd

from tvrl_bench.report.stats.intervals import value_stat
from tvrl_bench.report.tables.cell_builder import CellBuilder, RowSpec
from tvrl_bench.report.tables.definition_types import HalfGainColumn
from tvrl_bench.report.tables.filters import describe, intersect
from tvrl_bench.report.tables.table_result import Blank, Cell, Missing


class Histories(Protocol):
    """Metric histories by run (report/runs/histories.py's HistoryCache)."""

    def prefetch(self, run_ids: list[str], key: str) -> None: ...

    def get(self, run_id: str, key: str) -> pd.Series: ...


def steps_to_half_gain(curve: pd.Series) -> float:
    """The first step of `curve` (values indexed by step) at which its gain over the first value reaches half the
    final gain; NaN when it has fewer than two values or no positive final gain."""
    curve = curve.dropna().sort_index()
    if len(curve) < 2:
        return float("nan")
    gain = curve - curve.iloc[0]
    final = float(gain.iloc[-1])
    if not final > 0:
        return float("nan")
    return float(gain.index[np.flatnonzero(gain.to_numpy() >= final / 2)[0]])


def half_gain_cell(builder: CellBuilder, spec: RowSpec, col: HalfGainColumn, histories: Histories | None) -> Cell:
    """The cell of a steps-to-half-gain column in row `spec` of the table whose cells `builder` computes."""
    flt = intersect(spec.filter, col.where)
    if flt is None:
        return Blank()
    run_ids, seeds = builder.cell_runs(flt, spec.exclude)
    if not run_ids:
        return Missing(f"no finished runs with {describe(flt)}{builder.unfinished_note(flt, spec.exclude)}")
    if histories is None:
        return Missing("metric histories were not read (build the table through report.regenerate)")
    histories.prefetch(run_ids, col.metric)
    curves = [histories.get(r, col.metric) for r in run_ids]
    if all(len(c.dropna()) < 2 for c in curves):
        return Missing(f"runs with {describe(flt)} logged '{col.metric}' at fewer than two steps "
                       "(set training.trial.eval_every)")
    steps = pd.Series([steps_to_half_gain(c) for c in curves], index=seeds, dtype=float)
    per_seed = steps.groupby(level=0).mean().dropna()
    if per_seed.empty:
        return Missing(f"no run with {describe(flt)} gained on '{col.metric}' (final value <= first)")
    return value_stat(per_seed.to_numpy())


def note(col: HalfGainColumn) -> str:
    """The table note that defines the column."""
    return (
        f"{col.label}: per run, the first evaluation step at which {col.metric} minus its first (step-0) value "
        "reaches half of its final gain (last minus first); mean ± std over seeds, in steps (resolution: the "
        "evaluation interval); runs without a positive final gain are left out."
    )
