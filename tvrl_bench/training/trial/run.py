"""Run one trial from config files: build it with gin, track it in MLflow, train, evaluate, mark the run.

Resuming: a trial's checkpoint folder is `<out>/<experiment>/<trial key>/`. A rerun of the same config finds it
and continues from the last checkpoint as a new attempt: a new MLflow run (tag tvrl.attempt + 1) that carries
over the interrupted run's metrics and media up to the checkpoint; the interrupted run, if still RUNNING (its
process was SIGKILLed), is marked KILLED. A finished trial rerun starts anew.
Failures: a non-finite reward/loss/gradient or any error marks the run FAILED and keeps the checkpoint; SIGTERM
or Ctrl-C stops at the next step boundary, saves a checkpoint and marks the run KILLED. A trial that fails
before its run exists (its components cannot be built) gets a FAILED run too, so reports list it.
Ownership: one process at a time runs a trial key; its folder's lock (training/trial/lock.py) is held throughout.

This module orchestrates; the parts live beside it in trial/: options.py (options, result, run name and tags),
checks.py (what is refused before training), build.py (gin building, errors as FILE:LINE), built.py (the
built trial: its parts, the one place a Trainer is built, every tool's front door), identity.py (the trial key),
lock.py (the folder lock), failed_runs.py (a FAILED run for a trial that never started) and media_hooks.py (what a
run logs per step); the checkpoints are training/checkpoint.py and the loop training/loop.py.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from tvrl_bench import config as gin_config
from tvrl_bench.tracking import params as run_params
from tvrl_bench.tracking.mlflow_run import TrialTracker
from tvrl_bench.tracking.store import is_locked, without_waiting
from tvrl_bench.training.checkpoint import CheckpointDir, CheckpointError
from tvrl_bench.training.evaluation import WIDE_PREFIX, WIDE_PROMPTS_TAG, WIDE_RECORDS
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.trial.failed_runs import first_line, record_failure
from tvrl_bench.training.trial.identity import trial_key
from tvrl_bench.training.trial.lock import FolderLock
from tvrl_bench.training.trial.media_hooks import tracking_hooks
from tvrl_bench.training.trial.build import build_sharding
from tvrl_bench.training.trial.built import BuiltTrial
from tvrl_bench.training.trial.checks import check_values
from tvrl_bench.training.trial.options import TrialOptions, TrialResult, run_name, run_tags

__all__ = ["TrialOptions", "TrialResult", "run_trial"]

log = logging.getLogger("tvrl_bench.trial")


def run_trial(files: list[str], bindings: list[str] | None = None, options: TrialOptions | None = None) -> TrialResult:
    """Load the config, build the trial and run it to the end (see the module docstring for failure handling).

    The trial's folder is locked for the whole run (TrialBusy when another live process runs the same key). A
    trial that fails before its MLflow run exists (a critic that cannot be built, a bad value) still leaves a
    FAILED run with its key, labels and the error, so reports list it.
    """
    options = options or TrialOptions()
    gin_config.check_safe_name(options.experiment, "experiment name (--experiment)")
    loaded = gin_config.load_config(files, bindings)
    check_values(loaded)  # before anything is built: a bad value costs a second, not a model load
    key = trial_key()
    sharding = build_sharding(loaded)  # before the Accelerator: on GPUs it carries accelerate's FSDP plugin
    processes = Processes(cpu=options.cpu, sharding=sharding)
    checkpoints = CheckpointDir(Path(options.out_dir) / options.experiment / key)
    lock = FolderLock(checkpoints.folder).acquire() if processes.is_main else None
    try:
        try:
            trial = BuiltTrial.of(loaded, sharding, values_checked=True)
        except Exception as exc:
            if processes.is_main:
                record_failure(loaded, key, options, exc)
            raise
        return _run(trial, key, processes, checkpoints, options)
    finally:
        if lock is not None:
            lock.release()


def _run(trial: BuiltTrial, key: str, processes: Processes, checkpoints: CheckpointDir,
         options: TrialOptions) -> TrialResult:
    """Train and evaluate a built trial under its lock, tracking it in its own MLflow run."""
    loaded, settings = trial.loaded, trial.settings
    config_text = gin_config.captured_configs()["config.gin"]
    names = run_params.preset_names(
        loaded.parsed_files,
        {"policy": settings.policy, "sampler": settings.sampler, "reward": settings.reward, "credit": settings.credit},
    )
    names.update(options.labels)
    method = run_params.method_of(names["credit"], settings.credit, settings.steps, settings.objective)
    info = checkpoints.info()
    unfinished = info if info is not None and not info.finished else None
    attempt = options.attempt or (unfinished.attempt + 1 if unfinished else 1)
    tracker = None
    if processes.is_main:
        tracker = TrialTracker(options.tracking_uri, options.experiment, run_name(names, settings.seed, method, options),
                               run_tags(key, options, attempt))
        if unfinished and unfinished.run_id:
            tracker.end_previous(unfinished.run_id)  # even when its checkpoint turns out to be unusable
    status, store_gave_up = "FAILED", False
    try:
        saved = checkpoints.load() if unfinished else None  # a damaged checkpoint fails this attempt's run
        start = int(saved["step"]) if saved else 0
        if not processes.same_everywhere(start):  # each process reads the checkpoint from its own --out
            raise CheckpointError(f"{checkpoints.folder}: the trial's processes see different checkpoints (this one: "
                                  f"step {start}); put --out on a file system that every node of the trial shares")
        if tracker is not None:
            tracker.log_params({**names, "method": method, "seed": settings.seed,
                                "profile": run_params.profile_name(loaded.parsed_files), **run_params.operative_params()})
            tracker.log_text(config_text, "config/config.gin")
            tracker.log_text(gin_config.captured_configs()["operative_config.gin"], "config/operative_config.gin")
            if unfinished and unfinished.run_id:
                tracker.carry_over(unfinished.run_id, up_to_step=start)
        run_id = tracker.run_id if tracker else None
        trainer = trial.trainer(checkpoints, processes=processes, run_id=run_id,
                                hooks=tracking_hooks(tracker, settings), progress=options.progress)
        if saved:
            trainer.load_state(saved)
            log.info("resuming trial %s from step %d (attempt %d, run %s)", key, start, attempt, run_id)
        if processes.is_main:
            checkpoints.write_info(run_id, start, attempt=attempt)
        evaluation = trainer.run(start)
        metrics = evaluation.metrics if evaluation is not None else {}
        if tracker is not None and evaluation is not None:
            tracker.log_metrics({f"eval/{k}": v for k, v in metrics.items()}, step=settings.steps)
            if evaluation.wide is not None:
                tracker.log_metrics({f"{WIDE_PREFIX}{k}": v for k, v in evaluation.wide.metrics.items()},
                                    step=settings.steps)
                tracker.set_tags({WIDE_PROMPTS_TAG: str(evaluation.wide.prompts)})
                tracker.log_json(evaluation.wide.records, WIDE_RECORDS)
            tracker.log_json(evaluation.records, "eval/results.json")
            checkpoints.write_info(run_id, settings.steps, attempt=attempt, finished=True)
        status = "FINISHED"
        wide = evaluation.wide.metrics if evaluation is not None and evaluation.wide is not None else {}
        return TrialResult(run_id, status, metrics, key, checkpoints.folder, dict(wide))
    except KeyboardInterrupt:
        status = "KILLED"
        raise
    except Exception as exc:
        store_gave_up = is_locked(exc)
        if tracker is not None:
            with contextlib.suppress(Exception), _marking(options.tracking_uri, store_gave_up):
                tracker.set_tags({"tvrl.error": first_line(exc)})  # the store itself may be what failed
        raise
    finally:
        if tracker is not None:
            with _marking(options.tracking_uri, store_gave_up):
                tracker.finish(status)


def _marking(uri: str, store_gave_up: bool):
    """How the run is marked: as usual, or, once an access gave up on the locked store, with accesses that try it
    once and give up at once (tracking/store_wait.py), so the patience is not waited again for each."""
    return without_waiting(uri) if store_gave_up else contextlib.nullcontext()
