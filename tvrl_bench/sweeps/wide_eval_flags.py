"""Which of a study's trials wide-eval can score, and when it cannot, the tvrl-sweep flags that would let it.

A trial's key hashes its whole config, so a study swept with `--steps N` or `--profile P` keeps its trials under
keys that the study file alone does not give. `check_finished` finds every trial's finished checkpoint before any
scoring; when the study's folder holds other trials, `sweep_flags` recomputes the study's keys under the steps the
trials were trained for (each finished trial's `trial.json` records its step) and under the profiles the study
maps, and names the flags whose keys are the ones on disk: `--steps 1`, `--profile paper`.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from tvrl_bench import config as gin_config
from tvrl_bench.sweeps.plan import TrialSpec, expand, load_study
from tvrl_bench.sweeps.wide_eval import TrialNotFinished
from tvrl_bench.training.checkpoint import CheckpointDir

__all__ = ["check_finished", "sweep_flags"]


def _trials_in(runs: Path) -> dict[str, int]:
    """{trial key: the step its checkpoint records} for every trial folder in `runs`."""
    found = {}
    for folder in sorted(runs.iterdir()) if runs.is_dir() else []:
        info = CheckpointDir(folder).info()
        if info is not None:
            found[folder.name] = info.step
    return found


def _keys(study_file: str, profile: str | None, steps: int | None) -> set[str]:
    study, resolved = load_study(study_file, profile)
    overrides = [f"training.trial.steps = {steps}"] if steps is not None else []
    return {spec.key for spec in expand(study, resolved, overrides)}


def sweep_flags(study_file: str, profile: str | None, steps: int | None, runs: Path) -> str | None:
    """The `--profile` and `--steps` under which every trial of the study has a folder in `runs` (`"--steps 1"`;
    `""` for the study file alone), trying the steps the trials there were trained for and the profiles the study
    maps; None when no such flags are found (the study file changed since the sweep)."""
    held = _trials_in(runs)
    study, _ = load_study(study_file)
    profiles = list(dict.fromkeys([profile, None, *study.profiles]))
    step_counts = list(dict.fromkeys([steps, None, *sorted(s for s in held.values() if s > 0)]))
    for candidate_profile, candidate_steps in itertools.product(profiles, step_counts):
        try:
            keys = _keys(study_file, candidate_profile, candidate_steps)
        except gin_config.ConfigError:  # a profile this machine cannot configure
            continue
        if keys <= set(held):
            flags = [f"--profile {candidate_profile}"] if candidate_profile is not None else []
            flags += [f"--steps {candidate_steps}"] if candidate_steps is not None else []
            return " ".join(flags)
    return None


def check_finished(specs: list[TrialSpec], runs: Path, study_file: str, profile: str | None,
                   steps: int | None) -> None:
    """TrialNotFinished, naming the first trial without a finished checkpoint and what to do, unless every trial
    of `specs` (the study under `profile` and `steps`) has one in `runs`."""
    held = _trials_in(runs)
    for spec in specs:
        info = CheckpointDir(runs / spec.key).info()
        if info is not None and info.finished:
            continue
        if spec.key in held or not held:
            raise TrialNotFinished(
                f"{runs / spec.key}: trial {spec.title} has no finished checkpoint; finish the study first (rerun "
                "tvrl-sweep with the same study file, --out and flags)")
        given = " ".join([*([f"--profile {profile}"] if profile else []), *([f"--steps {steps}"] if steps is not None
                                                                            else [])])
        flags = sweep_flags(study_file, profile, steps, runs)
        if flags is None:
            raise TrialNotFinished(
                f"{runs}: none of its {len(held)} trials is trial {spec.title} of this study file (key {spec.key}), "
                "under any --steps its trials trained for or --profile the study maps: the study file changed since "
                "the sweep; pass wide-eval the study file tvrl-sweep ran")
        raise TrialNotFinished(
            f"{runs}: its {len(held)} trials were swept with {flags or 'no --steps or --profile'}, not "
            f"{given or 'the study file alone'} (other flags give other trial keys); pass wide-eval "
            f"{flags or 'no --steps or --profile'}, as tvrl-sweep ran")
