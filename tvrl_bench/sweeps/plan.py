"""Expanding a study into trials: one trial per combination of axis values and seed (plus base rows).

A trial is the profile, one preset per axis, and bindings (the study's, the seed, command-line overrides). Its
key is the hash of its canonical gin config, computed here by parsing it exactly as the worker will, so a typo
in a preset fails before any trial starts.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

import gin

from tvrl_bench import config as gin_config
from tvrl_bench import registry
from tvrl_bench.registry import suggest
from tvrl_bench.sweeps import validate
from tvrl_bench.sweeps.study import Study
from tvrl_bench.sweeps.validate_decide import check_decide, check_decide_metric, final_metrics
from tvrl_bench.training.trial.identity import trial_key


@dataclass(frozen=True)
class TrialSpec:
    """One trial of a study: what tvrl-train runs and how the sweep names it."""

    files: tuple[str, ...]
    bindings: tuple[str, ...]
    labels: dict[str, str] = field(hash=False)  # axis -> preset name
    seed: int = 0
    base: bool = False
    key: str = ""
    num_gpus: int = 0
    steps: int | None = None  # training.trial.steps as the trial's config sets it

    @property
    def title(self) -> str:
        parts = [f"{axis}={Path(value).stem if value.endswith('.gin') else value}" for axis, value in self.labels.items()]
        return ("base " if self.base else "") + " ".join(parts) + f" seed={self.seed}"


def load_study(path: str, profile: str | None = None) -> tuple[Study, str]:
    """Parse a study file into a Study (the `sweeps.study` bindings) and check every field (validate.py);
    returns it and the resolved path."""
    resolved = str(gin_config.resolve(path))
    gin_config.load_config([resolved])
    try:
        study = Study()
    except TypeError as exc:
        message = str(exc).split("\n", 1)[0]
        raise gin_config.ConfigError(
            f"{resolved}: the study needs sweeps.study.name and sweeps.study.axes ({message})"
        ) from None
    finally:
        gin.clear_config()
    validate.check_raw(study, resolved)
    if profile is not None and profile not in study.profiles and not profile.endswith(".gin"):
        raise gin_config.ConfigError(
            f"--profile {profile!r}: the study maps the profiles {', '.join(sorted(study.profiles))}; name one of "
            "them or a profile file (.gin)"
        )
    study = study.with_profile(profile)
    validate.check_study(study, resolved)
    validate.check_tables(study, resolved)
    check_decide(study, resolved)
    return study, resolved


def preset_path(axis: str, value: str, study_file: str) -> str:
    """The preset file of an axis value: components/<family>/<value>.gin, else <family>/<value>.gin beside the
    study file (a preset only that study's folder uses, e.g. sweeps/experiments/objectives/); a missing one is an
    error naming the study file and line."""
    axes = registry.axes()
    if axis not in axes:
        raise gin_config.ConfigError(
            f"{study_file}:{_line_of(study_file, axis)}: unknown axis '{axis}'{suggest(axis, axes)}; "
            f"axes are {', '.join(axes)}"
        )
    family = axes[axis]
    if value.endswith(".gin"):
        candidates = [value]
    else:
        beside = Path(study_file).parent / family / f"{value}.gin"
        candidates = [f"components/{family}/{value}.gin", str(beside)]
    for candidate in candidates:
        try:
            gin_config.resolve(candidate)
            return candidate
        except gin_config.ConfigError:
            pass
    folder = gin_config.PROJECT_ROOT / "components" / family
    available = sorted(p.stem for p in folder.glob("*.gin"))
    raise gin_config.ConfigError(
        f"{study_file}:{_line_of(study_file, value)}: axis '{axis}' names preset '{value}', but "
        f"{' nor '.join(candidates)} exists{suggest(value, available)} (presets of {family}: {', '.join(available)})"
    )


def _line_of(path: str, word: str) -> int:
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if re.search(rf"['\"]{re.escape(word)}['\"]", line):
            return number
    return 1


def _excluded(labels: dict[str, str], exclude: list[dict[str, str]]) -> bool:
    return any(all(labels.get(axis) == value for axis, value in rule.items()) for rule in exclude)


def _base_combinations(study: Study, axes: list[str], combinations: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Which configurations the untrained base rows take. `base = True`: one, every axis at its first value (as
    written, so its trial key never moves). `base = ['reward', ...]`: one per value of the named axes, each the
    first trained combination with that value, so that every critic (say) scores the base model itself."""
    if study.base is True:
        return [tuple(0 for _ in axes)]
    if not study.base:
        return []
    named = [axes.index(axis) for axis in study.base]
    chosen: dict[tuple[int, ...], tuple[int, ...]] = {}
    for combination in combinations:
        chosen.setdefault(tuple(combination[i] for i in named), combination)
    return list(chosen.values())


def expand(study: Study, study_file: str, overrides: list[str] = ()) -> list[TrialSpec]:
    """Every trial of the study in a stable order, each with its key (parsing each trial's config once)."""
    axes = list(study.axes)
    presets = {axis: [preset_path(axis, value, study_file) for value in study.axes[axis]] for axis in axes}
    trials = []
    combinations = [
        combination for combination in itertools.product(*(range(len(study.axes[a])) for a in axes))
        if not _excluded({axis: study.axes[axis][i] for axis, i in zip(axes, combination)}, study.exclude)
    ]
    for combination in _base_combinations(study, axes, combinations):
        labels = {axis: study.axes[axis][i] for axis, i in zip(axes, combination)}
        for seed in study.seeds:
            files = (study.profile, *(presets[axis][i] for axis, i in zip(axes, combination)))
            bindings = (*study.bindings, *overrides, f"training.trial.seed = {seed}", "training.trial.steps = 0")
            trials.append(TrialSpec(files, bindings, labels, seed, base=True))
    for combination in combinations:
        labels = {axis: study.axes[axis][i] for axis, i in zip(axes, combination)}
        for seed in study.seeds:
            files = (study.profile, *(presets[axis][i] for axis, i in zip(axes, combination)))
            bindings = (*study.bindings, *overrides, f"training.trial.seed = {seed}")
            trials.append(TrialSpec(files, bindings, labels, seed))
    if not trials:
        raise gin_config.ConfigError(
            f"{study_file}: the study has no trials (sweeps.study.exclude leaves out every combination); "
            "remove a rule from exclude or add axis values"
        )
    keyed, logged = [], ()
    loaded_arm = None
    try:
        for spec in trials:
            arm = (spec.files, spec.bindings[:-2] if spec.base else spec.bindings[:-1], spec.base)
            if arm == loaded_arm:  # the seeds of one arm differ in the seed alone: parse and check the arm once
                gin.bind_parameter("training.trial.seed", spec.seed)
            else:
                try:
                    loaded = gin_config.load_config(list(spec.files), list(spec.bindings))
                    check_trial_config(loaded)
                except gin_config.ConfigError as exc:  # a binding of the study file, not of the command line
                    raise gin_config.ConfigError(validate.in_study_file(str(exc), study.bindings, study_file)) from None
                loaded_arm = arm
            gpus, steps = _bound("training.trial.num_gpus", 0), _bound("training.trial.steps", None)
            keyed.append(TrialSpec(spec.files, spec.bindings, spec.labels, spec.seed, spec.base, trial_key(), int(gpus),
                                   steps))
            if not logged and not spec.base:
                logged = final_metrics()
    finally:
        gin.clear_config()
    validate.check_unique_keys(keyed, study_file)
    check_decide_metric(study, study_file, logged)
    return keyed


def check_trial_config(loaded: gin_config.LoadedConfig) -> None:
    """What can be checked of a trial without building it beyond loading its config (which checks every
    component's declared values): its prompt files."""
    from tvrl_bench.training.trial.checks import check_values

    check_values(loaded)


def _bound(name: str, default):
    """A parameter's bound value in the parsed config, or `default` when nothing binds it."""
    try:
        return gin.query_parameter(name)
    except ValueError:
        return default
