"""Run one trial from config files: build it with gin, track it in MLflow, train, evaluate, mark the run.

Resuming: a trial's checkpoint folder is `<out>/<experiment>/<trial key>/`. A rerun of the same config finds it
and continues from the last checkpoint as a new attempt: a new MLflow run (tag tvrl.attempt + 1) that carries
over the interrupted run's metrics and media up to the checkpoint; the interrupted run, if still RUNNING (its
process was SIGKILLed), is marked KILLED. A finished trial rerun starts anew.
Failures: a non-finite reward/loss/gradient or any error marks the run FAILED and keeps the checkpoint; SIGTERM
or Ctrl-C stops at the next step boundary, saves a checkpoint and marks the run KILLED.
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import gin

from tvrl_bench import config as gin_config
from tvrl_bench.prompts import PromptItem
from tvrl_bench.tracking import media, params as run_params
from tvrl_bench.tracking.mlflow_run import DEFAULT_TRACKING_URI, TrialTracker
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.distributed import Processes
from tvrl_bench.training.identity import trial_key
from tvrl_bench.training.loop import Hooks, StepOutput, Trainer
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.videoio import write_mp4

log = logging.getLogger("tvrl_bench.trial")


@dataclass
class TrialOptions:
    """Where a trial logs and keeps its files, and how a sweep identifies it."""

    tracking_uri: str = DEFAULT_TRACKING_URI
    experiment: str = "trials"
    out_dir: str = "runs"
    study: str | None = None
    parent_run_id: str | None = None
    attempt: int | None = None  # None: 1, or one more than the interrupted attempt being resumed
    labels: dict[str, str] = field(default_factory=dict)  # preset names a sweep knows (override detection)
    tags: dict[str, str] = field(default_factory=dict)
    progress: bool = True
    cpu: bool = False


@dataclass
class TrialResult:
    run_id: str | None
    status: str
    metrics: dict[str, float]
    key: str
    checkpoint: Path


def run_trial(files: list[str], bindings: list[str] | None = None, options: TrialOptions | None = None) -> TrialResult:
    """Load the config, build the trial and run it to the end (see the module docstring for failure handling)."""
    options = options or TrialOptions()
    loaded = gin_config.load_config(files, bindings)
    key = trial_key()
    config_text = gin_config.captured_configs()["config.gin"]
    settings = _build(loaded)
    processes = Processes(cpu=options.cpu)
    names = run_params.preset_names(
        loaded.parsed_files,
        {"policy": settings.policy, "sampler": settings.sampler, "reward": settings.reward, "credit": settings.credit},
    )
    names.update(options.labels)
    method = run_params.method_of(names["credit"], settings.credit, settings.steps)
    checkpoints = CheckpointDir(Path(options.out_dir) / options.experiment / key)
    info = checkpoints.info()
    unfinished = info if info is not None and not info.finished else None
    saved = checkpoints.load() if unfinished else None
    attempt = options.attempt or (unfinished.attempt + 1 if unfinished else 1)
    tracker = None
    if processes.is_main:
        tracker = TrialTracker(
            options.tracking_uri, options.experiment, run_params.run_name(names, settings.seed, options.study),
            _tags(key, options, attempt),
        )
    status = "FAILED"
    try:
        start = int(saved["step"]) if saved else 0
        if tracker is not None:
            tracker.log_params({**names, "method": method, "seed": settings.seed, **run_params.operative_params()})
            tracker.log_text(config_text, "config/config.gin")
            tracker.log_text(gin_config.captured_configs()["operative_config.gin"], "config/operative_config.gin")
            if unfinished and unfinished.run_id:
                tracker.carry_over(unfinished.run_id, up_to_step=start)
        run_id = tracker.run_id if tracker else None
        trainer = Trainer(settings, processes, checkpoints, run_id, _hooks(tracker, settings), options.progress)
        if saved:
            trainer.load_state(saved)
            log.info("resuming trial %s from step %d (attempt %d, run %s)", key, start, attempt, run_id)
        if processes.is_main:
            checkpoints.write_info(run_id, start, attempt=attempt)
        metrics = trainer.run(start)
        if tracker is not None:
            tracker.log_metrics({f"eval/{k}": v for k, v in metrics.items()}, step=settings.steps)
            tracker.log_json(trainer.last_raw, "eval/results.json")
            checkpoints.write_info(run_id, settings.steps, attempt=attempt, finished=True)
        status = "FINISHED"
        return TrialResult(run_id, status, metrics, key, checkpoints.folder)
    except KeyboardInterrupt:
        status = "KILLED"
        raise
    finally:
        if tracker is not None:
            tracker.finish(status)


def _tags(key: str, options: TrialOptions, attempt: int) -> dict[str, str]:
    tags = {"tvrl.trial_key": key, "tvrl.attempt": str(attempt), "tvrl.role": "trial", **options.tags}
    if options.study:
        tags["tvrl.study"] = options.study
    if options.parent_run_id:
        tags["mlflow.parentRunId"] = options.parent_run_id
    return tags


def _build(loaded: gin_config.LoadedConfig) -> TrialSettings:
    """Construct the trial through gin, then reject bindings nothing used."""
    try:
        settings = TrialSettings()
    except TypeError as exc:
        if "REQUIRED" in str(exc) or "required" in str(exc):
            raise gin_config.ConfigError(
                f"{exc}\nA trial needs policy, sampler, reward, credit, objective, evaluator and dataset: start from "
                "components/profiles/toy.gin (`include 'components/profiles/toy.gin'`)."
            ) from None
        raise
    gin_config.check_unused(loaded)
    return settings


def _hooks(tracker: TrialTracker | None, settings: TrialSettings) -> Hooks:
    if tracker is None:
        return Hooks()
    grid = settings.policy.token_grid

    def on_step(step: int, out: StepOutput) -> None:
        tracker.log_metrics(out.metrics, step=step + 1)
        if (step + 1) % settings.log_media_every == 0 or step == 0:
            with tempfile.TemporaryDirectory() as tmp:
                path = media.credit_heatmap(out.video, out.weights, grid, Path(tmp) / f"step_{step + 1:06d}.png", out.prompt)
                tracker.log_artifact(path, "credit")

    def on_samples(tag: str, videos, items: list[PromptItem]) -> None:
        index = []
        with tempfile.TemporaryDirectory() as tmp:
            for i, (video, item) in enumerate(zip(videos, items)):
                name = f"sample_{i:03d}.mp4"
                write_mp4(video, Path(tmp) / name, fps=4, min_side=128)
                index.append({"file": name, "index": i, "prompt": item.prompt, "checks": list(item.checks), "seed": settings.seed})
            tracker.log_artifacts(tmp, f"samples/{tag}")
        tracker.log_json(index, f"samples/{tag}/index.json")

    return Hooks(on_step=on_step, on_samples=on_samples)
