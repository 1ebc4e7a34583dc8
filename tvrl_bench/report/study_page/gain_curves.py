"""Gao-style curves (Gao, Schulman and Hilton, arXiv 2210.10760): per trained method, the critic's gain and the
evaluator's gain against the training step, both 0 at step 0, from the evaluations every trial logs during
training (`eval/critic_reward` and `eval/overall`: the same eval prompts and noise at every evaluation).

Per run, gain_t = 100 x the normalised change from the step-0 value to the value at step t (hacking_rules.py;
raw x 100 for a critic off [0, 1]); runs of one seed are averaged, then the mean over seeds per step with a band of
± one std. A hacked method shows the evaluator's curve turning over while the critic's keeps rising; a lenient or
weak critic shows both rising, the evaluator's less. Runs without a step-0 evaluation give no curve (runs loaded
from a record saved before records kept the eval/* curves, or trials that never evaluated during training).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tvrl_bench.report.study_page.hacking_rules import SCALE, normalised_change
from tvrl_bench.report.study_page.methods import Method
from tvrl_bench.report.study_page.svg import Curve, colour, curves_svg

CRITIC, EVALUATOR = "eval/critic_reward", "eval/overall"
LABELS = {CRITIC: f"critic gain ({CRITIC})", EVALUATOR: f"evaluator gain ({EVALUATOR})"}  # the plot's legend


def run_gains(history: pd.Series) -> pd.Series | None:
    """gain per step of one run's metric history (indexed by step), or None without a value at step 0."""
    history = history.dropna()
    if len(history) < 2 or history.index[0] != 0:
        return None
    start = float(history.iloc[0])
    if history.between(0.0, 1.0).all():
        return history.map(lambda v: SCALE * normalised_change(start, float(v)))
    return SCALE * (history - start)


def method_curve(method: Method, metric: str, cache: Any, index: int) -> Curve | None:
    """The method's mean gain curve of `metric` over seeds (None when no run has a step-0 evaluation)."""
    by_seed: dict[str, list[pd.Series]] = {}
    for run_id, seed in zip(method.runs["run_id"], method.runs["_seed"]):
        gained = run_gains(cache.get(str(run_id), metric))
        if gained is not None:
            by_seed.setdefault(str(seed), []).append(gained)
    if not by_seed:
        return None
    table = pd.concat([pd.concat(runs, axis=1).mean(axis=1) for runs in by_seed.values()], axis=1)
    mean, std = table.mean(axis=1), table.std(axis=1, ddof=1)
    return Curve(LABELS[metric], colour(index), table.index.to_numpy(dtype=float), mean.to_numpy(),
                 std.to_numpy() if len(by_seed) > 1 else np.full(len(mean), np.nan), len(by_seed))


def gain_curves(methods: list[Method], cache: Any) -> tuple[list[tuple[str, str]], list[str]]:
    """([(method label, svg)], notes): one plot per trained method with both gains (the critic's in the palette's
    first colour, blue, the evaluator's in its second, orange; the plot's legend names them); a note per method
    without."""
    out, notes = [], []
    for m in methods:
        if m.base:
            continue
        curves = [c for i, metric in enumerate((CRITIC, EVALUATOR)) if (c := method_curve(m, metric, cache, i))]
        if len(curves) == 2:
            out.append((m.label, curves_svg(curves, f"{m.label}: gains since step 0 (×100)", legend=True)))
        else:
            notes.append(f"{m.label}: no gain curve (its runs hold no step-0 evaluation of both {CRITIC} and "
                         f"{EVALUATOR}: runs loaded from a record saved before records kept curves, or trials with "
                         "eval_every = 0).")
    return out, notes
