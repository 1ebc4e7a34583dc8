"""A study's finished runs must be one configuration per arm and seed, or a table averages two as one seed.

A cell averages its runs of each seed first (tables/cell_builder.py), which is right for the arms a table does not
separate (its notes and answer say so), and wrong for two configurations of the same arm: a run of 75 steps and
one of 50 (a rerun with `tvrl-sweep --steps`), or of two profiles, would read as one seed of their mean. The
sweep and `tvrl-bench record load` refuse to add such runs (sweeps/same_trials.py); a store that holds them anyway
(written by hand, or by an older version) is refused here with the setting that differs.
"""

from __future__ import annotations

import pandas as pd

from tvrl_bench import registry
from tvrl_bench.report.errors import ReportError

TRIAL_KEY_COLUMN = "tags.tvrl.trial_key"
SEPARATE = ("sweep each profile or setting under its own sweeps.study.name or into its own store (--tracking-uri), and report each "
            "with --study / --tracking-uri")


def axis_params() -> tuple[str, ...]:
    """The params that name a run's arm: every trial family's axis (policy, sampler, reward, credit, objective,
    evaluator, dataset) and `method`."""
    return (*registry.axes(), "method")


def check_one_profile(study: str, trials: pd.DataFrame) -> None:
    """ReportError when the study's finished trials ran on more than one profile (their `profile` param): a
    table would average a slot-world seed with a sprite-world seed as one."""
    column = trials.get("params.profile")
    if column is None:
        return
    counts = column.dropna().value_counts()
    if len(counts) > 1:
        listed = ", ".join(f"{name} ({int(n)} runs)" for name, n in sorted(counts.items()))
        raise ReportError(
            f"study '{study}' holds finished runs of {len(counts)} profiles: {listed}; a table would average "
            f"them as one seed: {SEPARATE}"
        )


def check_one_config(study: str, trials: pd.DataFrame) -> None:
    """ReportError when two finished trials (one run per trial key) share an arm and a seed: the same axis params,
    `method` and `seed`, under different trial keys. Runs without a trial key (logged by hand) are not compared."""
    if TRIAL_KEY_COLUMN not in trials.columns or "params.seed" not in trials.columns:
        return
    keyed = trials[trials[TRIAL_KEY_COLUMN].notna()]
    slot = [c for c in (f"params.{p}" for p in (*axis_params(), "seed")) if c in keyed.columns]
    sizes = keyed.fillna({c: "" for c in slot}).groupby(slot)[TRIAL_KEY_COLUMN].nunique()
    clashing = sizes[sizes > 1]
    if clashing.empty:
        return
    first = clashing.index[0] if len(slot) > 1 else (clashing.index[0],)
    runs = keyed
    for column, value in zip(slot, first):
        runs = runs[runs[column].fillna("") == value]
    arm = " ".join(f"{c.removeprefix('params.')}={v}" for c, v in zip(slot, first) if v != "")
    raise ReportError(
        f"study '{study}' holds {len(runs)} finished trials of the same arm and seed ({arm}) under different "
        f"trial keys ({_differences(runs)}; {len(clashing)} arm-seeds in all); a table would average them as one "
        f"seed: {SEPARATE}"
    )


def _differences(runs: pd.DataFrame) -> str:
    """'training.trial.steps: 50, 75': the params whose values differ between the runs (three at most)."""
    found = []
    for column in sorted(c for c in runs.columns if c.startswith("params.")):
        values = sorted({str(v) for v in runs[column]})
        if len(values) > 1:
            found.append(f"{column.removeprefix('params.')}: {', '.join(values)}")
    listed = "; ".join(found[:3]) + (f"; {len(found) - 3} more" if len(found) > 3 else "")
    return listed or "their params are equal; compare their config/operative_config.gin"
