"""A study's finished trials as methods (one per combination of the axis values that vary), their per-seed final
values, and which metrics the page reads (`wide_eval/*` where every trial has them, else `eval/*`).

A method is every finished trial run that shares the values of the study's axis params that vary between trials
(`policy`, `sampler`, `reward`, `credit`, `objective`, `evaluator`, `dataset`, `method`); the base model's runs
(`method = base`) are one method, `base`, whatever axis values they carry. Its label joins the varying values and,
varying or not, its credit and objective where the runs carry them, as the tables name a row (`window3-nft`,
`toy_oracle-uniform`): a lone DiffusionNFT arm with uniform credit is `uniform-nft`, never its `method` param
(`GRPO`, derived from the credit alone), which labels a method only when nothing else does. Its sample unit is
the seed: runs of one seed are averaged, as in the tables; a run without a `seed` param counts as its own seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from tvrl_bench.report.runs.frames import logged_nan

AXES = ("policy", "sampler", "reward", "credit", "objective", "evaluator", "dataset", "method")
BASE = "base"
SOURCES = ("wide_eval", "eval")


@dataclass
class Method:
    """The finished runs of one method: label, whether it is the base model, its axis values and its runs (rows of
    the runs frame, ordered by seed, with a `_seed` column)."""

    label: str
    base: bool
    params: dict[str, str]
    runs: pd.DataFrame = field(repr=False)
    _per_seed: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)

    @property
    def seeds(self) -> list[str]:
        return list(dict.fromkeys(self.runs["_seed"]))

    def run_of(self, seed: str) -> str | None:
        """The id of this method's (first) run of `seed`, or None."""
        rows = self.runs[self.runs["_seed"] == seed]
        return None if rows.empty else str(rows["run_id"].iloc[0])

    def per_seed(self, metric: str) -> dict[str, float]:
        """{seed: the mean over that seed's runs of the metric's latest value}, for the seeds that logged it."""
        if metric not in self._per_seed:
            column = f"metrics.{metric}"
            if column not in self.runs.columns:
                self._per_seed[metric] = {}
            else:
                values = pd.to_numeric(self.runs[column], errors="coerce")
                means = values.groupby(self.runs["_seed"], sort=False).mean()
                self._per_seed[metric] = {str(s): float(v) for s, v in means.items() if not math.isnan(v)}
        return dict(self._per_seed[metric])

    def diverged(self, metric: str) -> list[str]:
        """The seeds whose runs logged `metric` as NaN (they diverged; `per_seed` leaves them out)."""
        return list(dict.fromkeys(str(s) for s in self.runs.loc[logged_nan(self.runs, metric), "_seed"]))

    def why_absent(self, metric: str, otherwise: str = "no {metric} logged") -> str:
        """Why this method has no value of `metric`: its runs diverged (logged NaN), else `otherwise`."""
        seeds = self.diverged(metric)
        if seeds:
            return f"diverged: {metric} is NaN (seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)})"
        return otherwise.format(metric=metric)

    def param(self, name: str) -> str | None:
        column = f"params.{name}"
        if column not in self.runs.columns:
            return None
        values = self.runs[column].dropna()
        return None if values.empty else str(values.iloc[0])


def seed_key(seed: str) -> tuple:
    try:
        return (0, float(seed), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(seed))


def _with_seeds(trials: pd.DataFrame) -> pd.DataFrame:
    frame = trials.copy()
    seeds = frame["params.seed"] if "params.seed" in frame.columns else pd.Series([None] * len(frame), index=frame.index)
    frame["_seed"] = [str(s) if isinstance(s, str) and s else f"run {r[:8]}" for s, r in zip(seeds, frame["run_id"])]
    order = sorted(range(len(frame)), key=lambda i: (seed_key(frame["_seed"].iloc[i]), str(frame["run_id"].iloc[i])))
    return frame.iloc[order].reset_index(drop=True)


def group_methods(trials: pd.DataFrame) -> list[Method]:
    """The study's methods: the base model first, then the others in natural order of their labels."""
    if trials.empty:
        return []
    frame = _with_seeds(trials)
    method_param = frame["params.method"] if "params.method" in frame.columns else pd.Series([None] * len(frame))
    is_base = (method_param == BASE).to_numpy()
    others = frame[~is_base]
    varying = [a for a in AXES if f"params.{a}" in others.columns and others[f"params.{a}"].nunique(dropna=False) > 1]
    named = [a for a in ("credit", "objective") if f"params.{a}" in others.columns and others[f"params.{a}"].notna().any()]
    varying = [a for a in AXES if a in varying or a in named]  # credit and objective name a method even when fixed
    methods = []
    if is_base.any():
        runs = frame[is_base].reset_index(drop=True)
        methods.append(Method(BASE, True, {a: _first(runs, a) for a in AXES if _first(runs, a)}, runs))
    if not others.empty:
        keys = [a for a in varying] or [a for a in ("method",) if "params.method" in others.columns]
        if "method" in keys and len(keys) > 1:  # `method` (GRPO, TVRL) follows from credit: drop it when it adds nothing
            rest = [f"params.{a}" for a in keys if a != "method"]
            if others.groupby(rest, dropna=False)["params.method"].nunique(dropna=False).max() <= 1:
                keys.remove("method")
        if keys:
            labels = others[[f"params.{a}" for a in keys]].fillna("—").astype(str).agg("-".join, axis=1)
        else:
            labels = pd.Series(["trials"] * len(others), index=others.index)
        groups = {str(label): runs for label, runs in others.groupby(labels, sort=False)}
        for label in sorted(groups, key=_natural):
            runs = groups[label].reset_index(drop=True)
            methods.append(Method(label, False, {a: _first(runs, a) for a in AXES if _first(runs, a)}, runs))
    return methods


def _first(runs: pd.DataFrame, axis: str) -> str | None:
    column = f"params.{axis}"
    if column not in runs.columns:
        return None
    values = runs[column].dropna()
    return None if values.empty else str(values.iloc[0])


def _natural(text: str) -> list:
    import re

    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text) if t]


@dataclass(frozen=True)
class Source:
    """Which metrics the page reads: `prefix` is `wide_eval` or `eval`; `note` says why, for the page."""

    prefix: str
    note: str

    @property
    def overall(self) -> str:
        return f"{self.prefix}/overall"

    @property
    def critic(self) -> str:
        return f"{self.prefix}/critic_reward"


def choose_source(trials: pd.DataFrame) -> Source:
    """`wide_eval/*` when every finished trial logged `wide_eval/overall` (the final policies scored on more
    held-out prompts by `tvrl-bench wide-eval` or the trial itself; a NaN, a diverged trial, counts as logged),
    else `eval/*`."""
    total = len(trials)
    column = "metrics.wide_eval/overall"
    logged = pd.to_numeric(trials[column], errors="coerce").notna() if column in trials.columns else None
    have = int((logged | logged_nan(trials, "wide_eval/overall")).sum()) if logged is not None else 0
    if total and have == total:
        prompts = _prompts_tag(trials)
        more = f" on {prompts} held-out prompts" if prompts else ""
        return Source("wide_eval", f"Final scores from wide_eval/* (every trial's final policy scored{more}); the "
                                   "curves are eval/* during training.")
    if have:
        return Source("eval", f"Final scores from eval/*: only {have} of {total} trials logged wide_eval/*, and "
                              "a comparison needs the same metric on both sides.")
    return Source("eval", "Final scores from eval/* (no trial logged wide_eval/*).")


def _prompts_tag(trials: pd.DataFrame) -> str | None:
    column = "tags.tvrl.wide_eval_prompts"
    if column not in trials.columns:
        return None
    values = sorted(set(trials[column].dropna().astype(str)))
    return "/".join(values) if values else None


def common_seed(methods: list[Method]) -> str | None:
    """The lowest seed every method has, or None when there is none."""
    if not methods:
        return None
    shared = set(methods[0].seeds)
    for m in methods[1:]:
        shared &= set(m.seeds)
    return min(shared, key=seed_key) if shared else None

