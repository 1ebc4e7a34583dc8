"""One configuration per trial of a study: runs of another step count, profile or setting never join it.

A study's tables, its staged decisions and its records read a trial as an arm (its axis values) and a seed: two
finished runs of the same arm and seed are averaged as one seed. Runs of the same arm and seed under another trial
key (the hash of the whole config: `tvrl-sweep --steps`, another profile, an edited binding) would be averaged with
them, so a sweep or a record load that would add them is refused before it writes anything, naming the setting
that differs and the fix (another sweeps.study.name, or another store). The untrained base rows train 0 steps
whatever `--steps` says, so their keys, and their runs, are shared by every step count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from tvrl_bench.config import ConfigError
from tvrl_bench.tracking.params import profile_name

Slot = tuple  # (axis values, seed, base): what a table averages as one seed of one arm
SEPARATE = "run it under another sweeps.study.name or into another store (--tracking-uri)"


def run_slot(params: Mapping[str, str], axes: Iterable[str]) -> Slot:
    """The arm and seed a run's params name (`method` 'base' marks an untrained base row)."""
    return tuple(params.get(axis) for axis in axes), params.get("seed"), params.get("method") == "base"


def spec_slot(spec, axes: Iterable[str]) -> Slot:
    """The arm and seed of a planned trial (sweeps/plan.py TrialSpec), as its run's params will name them."""
    names = tuple(Path(v).stem if v.endswith(".gin") else v for v in (spec.labels[axis] for axis in axes))
    return names, str(spec.seed), spec.base


def differing_setting(recorded: Mapping[str, str], planned: Mapping[str, str]) -> str:
    """'training.trial.steps = 75 (now 50)': the first setting recorded and planned differ in; '' when none of
    those compared does (params absent on either side are not compared)."""
    for name in ("profile", "training.trial.steps", *sorted(set(recorded) & set(planned))):
        if name in recorded and name in planned and str(recorded[name]) != str(planned[name]):
            return f"{name} = {recorded[name]} (now {planned[name]})"
    return ""


def check_sweep_joins(study, trials: list, runs, path: str) -> None:
    """ConfigError when the store holds finished runs of the study's arms and seeds under other trial keys
    (`runs`: sweeps/state.py StudyRuns; `trials`: the planned TrialSpecs)."""
    axes = list(study.axes)
    planned = {spec_slot(spec, axes): spec for spec in trials}
    keys = {spec.key for spec in trials}
    clashes = []
    for key in runs.by_key:
        run = runs.latest_finished(key) if key not in keys else None
        spec = planned.get(run_slot(run.data.params, axes)) if run is not None else None
        if spec is not None:
            clashes.append((run, spec))
    if not clashes:
        return
    order = {spec.key: i for i, spec in enumerate(trials)}
    run, spec = min(clashes, key=lambda clash: order[clash[1].key])  # the first in the plan's order
    now = {"profile": profile_name([study.profile])}
    if spec.steps is not None:
        now["training.trial.steps"] = str(spec.steps)
    setting = differing_setting(run.data.params, now)
    fix = ""
    if setting.startswith("training.trial.steps"):
        fix = f"sweep it with --steps {run.data.params['training.trial.steps']}, as its runs were, or "
    what = setting or (f"another configuration (trial key {key_of(run)}, now {spec.key}: compare the runs' "
                       "config/operative_config.gin)")
    raise ConfigError(
        f"{path}: study {study.name} already holds {len(clashes)} finished runs of the arms and seeds this sweep "
        f"plans under other trial keys ({spec.title}: {what}); a table would average the two as one seed: {fix}"
        f"{SEPARATE}"
    )


def check_sweep_profile(study, runs, path: str) -> None:
    """ConfigError when the store's finished runs of the study ran another profile than this sweep's (their
    `profile` param; a run without one is not compared)."""
    planned = profile_name([study.profile])
    other: dict[str, int] = {}
    for key in runs.by_key:
        run = runs.latest_finished(key)
        name = run.data.params.get("profile") if run is not None else None
        if name is not None and name != planned:
            other[name] = other.get(name, 0) + 1
    if other:
        listed = ", ".join(f"{n} runs of {name}" for name, n in sorted(other.items()))
        raise ConfigError(
            f"{path}: study {study.name} already holds finished runs of another profile ({listed}), and this sweep "
            f"runs {study.profile} ({planned}): a table would average the two as one seed; {SEPARATE}"
        )


def key_of(run) -> str:
    return run.data.tags.get("tvrl.trial_key", "?")


__all__ = ["SEPARATE", "check_sweep_profile", "check_sweep_joins", "differing_setting", "run_slot", "spec_slot"]
