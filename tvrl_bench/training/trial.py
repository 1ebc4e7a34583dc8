"""Run one trial from config files: build it with gin, track it in MLflow, train, evaluate, mark the run.

Resuming: a trial's checkpoint folder is `<out>/<experiment>/<trial key>/`. A rerun of the same config finds it
and continues from the last checkpoint as a new attempt: a new MLflow run (tag tvrl.attempt + 1) that carries
over the interrupted run's metrics and media up to the checkpoint; the interrupted run, if still RUNNING (its
process was SIGKILLed), is marked KILLED. A finished trial rerun starts anew.
Failures: a non-finite reward/loss/gradient or any error marks the run FAILED and keeps the checkpoint; SIGTERM
or Ctrl-C stops at the next step boundary, saves a checkpoint and marks the run KILLED. A trial that fails
before its run exists (its components cannot be built) gets a FAILED run too, so reports list it.
Ownership: one process at a time runs a trial key; its folder's lock (training/lock.py) is held throughout.
"""

from __future__ import annotations

import contextlib
import logging
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import gin

from tvrl_bench import config as gin_config, registry
from tvrl_bench.prompts import PromptItem
from tvrl_bench.tracking import media, params as run_params
from tvrl_bench.tracking.mlflow_run import TrialTracker, record_failed_run
from tvrl_bench.tracking.store import DEFAULT_TRACKING_URI
from tvrl_bench.training.checkpoint import CheckpointDir, CheckpointError
from tvrl_bench.training.distributed import Processes
from tvrl_bench.training.identity import trial_key
from tvrl_bench.training.lock import FolderLock
from tvrl_bench.training.loop import Hooks, StepOutput, Trainer
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.sharding import ShardingSettings
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
    sharding = _sharding(loaded)  # before the Accelerator: on GPUs it carries accelerate's FSDP plugin
    processes = Processes(cpu=options.cpu, sharding=sharding)
    checkpoints = CheckpointDir(Path(options.out_dir) / options.experiment / key)
    lock = FolderLock(checkpoints.folder).acquire() if processes.is_main else None
    try:
        try:
            settings = _build(loaded)
            _check_prompts(settings)
        except Exception as exc:
            if processes.is_main:
                _record_failure(loaded, key, options, exc)
            raise
        return _run(loaded, key, settings, processes, checkpoints, options, sharding)
    finally:
        if lock is not None:
            lock.release()


def check_values(loaded: gin_config.LoadedConfig) -> None:
    """`training.trial` values in range and the bound prompt files readable, from the parsed config alone."""
    from tvrl_bench.datasets.files import check_bound_prompt_files
    from tvrl_bench.training.validation import bound_trial_values, check_trial_values

    check_trial_values(bound_trial_values(TrialSettings), lambda name: gin_config.locate(loaded, "training.trial", name))
    check_bound_prompt_files()


def _run(loaded: gin_config.LoadedConfig, key: str, settings: TrialSettings, processes: Processes,
         checkpoints: CheckpointDir, options: TrialOptions, sharding: ShardingSettings | None = None) -> TrialResult:
    """Train and evaluate a built trial under its lock, tracking it in its own MLflow run."""
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
        tracker = TrialTracker(options.tracking_uri, options.experiment, _run_name(names, settings.seed, method, options),
                               _tags(key, options, attempt))
        if unfinished and unfinished.run_id:
            tracker.end_previous(unfinished.run_id)  # even when its checkpoint turns out to be unusable
    status = "FAILED"
    try:
        saved = checkpoints.load() if unfinished else None  # a damaged checkpoint fails this attempt's run
        start = int(saved["step"]) if saved else 0
        if not processes.same_everywhere(start):  # each process reads the checkpoint from its own --out
            raise CheckpointError(f"{checkpoints.folder}: the trial's processes see different checkpoints (this one: "
                                  f"step {start}); put --out on a file system that every node of the trial shares")
        if tracker is not None:
            tracker.log_params({**names, "method": method, "seed": settings.seed, **run_params.operative_params()})
            tracker.log_text(config_text, "config/config.gin")
            tracker.log_text(gin_config.captured_configs()["operative_config.gin"], "config/operative_config.gin")
            if unfinished and unfinished.run_id:
                tracker.carry_over(unfinished.run_id, up_to_step=start)
        run_id = tracker.run_id if tracker else None
        try:
            trainer = Trainer(settings, processes, checkpoints, run_id, _hooks(tracker, settings), options.progress, sharding)
        except ValueError as exc:  # values that do not fit together (batch splits, processes)
            raise gin_config.ConfigError(_locate_values(loaded, str(exc))) from None
        if saved:
            trainer.load_state(saved)
            log.info("resuming trial %s from step %d (attempt %d, run %s)", key, start, attempt, run_id)
        if processes.is_main:
            checkpoints.write_info(run_id, start, attempt=attempt)
        evaluation = trainer.run(start)
        metrics = evaluation.metrics if evaluation is not None else {}
        if tracker is not None and evaluation is not None:
            tracker.log_metrics({f"eval/{k}": v for k, v in metrics.items()}, step=settings.steps)
            tracker.log_json(evaluation.records, "eval/results.json")
            checkpoints.write_info(run_id, settings.steps, attempt=attempt, finished=True)
        status = "FINISHED"
        return TrialResult(run_id, status, metrics, key, checkpoints.folder)
    except KeyboardInterrupt:
        status = "KILLED"
        raise
    except Exception as exc:
        if tracker is not None:
            with contextlib.suppress(Exception):  # the store itself may be what failed
                tracker.set_tags({"tvrl.error": _first_line(exc)})
        raise
    finally:
        if tracker is not None:
            tracker.finish(status)


def _sharding(loaded: gin_config.LoadedConfig) -> ShardingSettings:
    """`training.sharding` as the config binds it; a bad value is a ConfigError naming where it was bound."""
    try:
        return ShardingSettings()
    except gin_config.ConfigError as exc:
        name = str(exc).removeprefix("training.sharding.").split(" ", 1)[0]
        where = gin_config.locate(loaded, "training.sharding", name)
        message = _without_gin_context(str(exc))
        raise gin_config.ConfigError(f"{where}: {message}" if where else message) from None


def _run_name(names: dict[str, str], seed: int, method: str, options: TrialOptions) -> str:
    """A sweep's trial is named by its axis values and seed (`sage-window3-s0`); a lone trial by its presets."""
    if options.labels:
        return run_params.axis_run_name(options.labels, seed, base=method == "base")
    return run_params.run_name(names, seed, options.study)


def _first_line(exc: BaseException) -> str:
    """`Type: first line of the message`, for tag tvrl.error (MLflow caps tag values: 4000 characters kept)."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0] if message else ''}"[:4000]


def _record_failure(loaded: gin_config.LoadedConfig, key: str, options: TrialOptions, exc: BaseException) -> None:
    """Log a FAILED run for a trial that failed before its own run existed (its error in tag tvrl.error)."""
    seed = _bound("training.trial.seed", 0)
    steps = _bound("training.trial.steps", 100)
    every_axis = {**run_params.presets_in_files(loaded.parsed_files, registry.axes()), **options.labels}
    names = {**{axis: every_axis[axis] for axis in registry.logged_axes() if axis in every_axis}, **options.labels}
    method = run_params.method_from_presets(every_axis, base=steps == 0)
    params = {**names, "method": method, "seed": seed}
    if options.labels:
        name = run_params.axis_run_name(options.labels, seed, base=method == "base")
    elif set(registry.logged_axes()) <= set(names):
        name = run_params.run_name(names, seed, options.study)
    else:
        name = "-".join([*names.values(), f"s{seed}"])
    error = _first_line(exc)
    try:
        run_id = record_failed_run(options.tracking_uri, options.experiment, name, _tags(key, options, options.attempt or 1),
                                   params, error)
        log.info("trial %s failed before training; recorded FAILED run %s", key, run_id)
    except Exception as record_error:  # the store itself may be the problem: the original error matters more
        log.warning("could not record the failed trial %s in MLflow: %s", key, record_error)


def _bound(name: str, default):
    try:
        value = gin.query_parameter(name)
    except ValueError:
        return default
    return value if isinstance(value, (int, float, str)) else default


def _check_prompts(settings: TrialSettings) -> None:
    """Prompts the trial cannot use, refused before training with the file and line each was read from.

    A critic that scores a prompt's checks gets nothing to score from a prompt without checks: a training
    prompt's group would have equal rewards and advantages 0 (training silently learns nothing from it), and an
    evaluation prompt would silently drop out of eval/overall. A prompt with words the policy's text encoder does
    not know (the toy policy reads only the toy grammar) would fail in the middle of training.
    """
    locations = getattr(settings.dataset, "locations", None) or {}
    train = list(settings.dataset.train)
    evaluated = list(settings.dataset.eval)[: settings.eval_prompts]
    roles = [
        ("training", train, "these prompts would train nothing (advantage 0)"),
        ("evaluation", evaluated, "these prompts would silently be left out of eval/overall"),
    ]
    for role, items, effect in roles if getattr(settings.reward, "uses_checks", False) else []:
        lacking = [item for item in items if not item.checks]
        if not lacking:
            continue
        where = locations.get(lacking[0].prompt) or f"dataset '{settings.dataset.name}'"
        raise gin_config.ConfigError(
            f"{where}: {role} prompt {lacking[0].prompt!r} has no checks ({len(lacking)} of {len(items)} {role} "
            f"prompts have none), but the critic {type(settings.reward).__name__} scores each prompt's yes/no checks, "
            f"so {effect}; add a `checks` column or field, or write them with "
            "`tvrl-bench decompose PROMPTS --model QWEN_PATH --out checks.jsonl` and bind datasets.file.checks_path"
        )
    tokenize = getattr(getattr(settings.policy, "text_encoder", None), "tokenize", None)
    if not callable(tokenize):
        return
    prompts = list(dict.fromkeys(i.prompt for i in [*train, *evaluated]))
    try:
        tokenize(prompts)  # one call for the whole set; the prompt at fault is looked for only when it fails
    except gin_config.ConfigError:
        for item in prompts:
            try:
                tokenize([item])
            except gin_config.ConfigError as exc:
                where = locations.get(item) or f"dataset '{settings.dataset.name}'"
                raise gin_config.ConfigError(
                    f"{where}: {exc}; rewrite the prompt in those words or remove it, or use a policy that reads "
                    "any text (components/policies/hunyuan_video15_480p.gin)"
                ) from None


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
    except gin_config.ConfigError as exc:  # a value out of range: name the file and line that bound it
        raise gin_config.ConfigError(_locate_values(loaded, _without_gin_context(str(exc)))) from None
    except registry.RegistryError as exc:  # a family's macro unbound, or a component of the wrong family
        families = ", ".join(f.axis for f in registry.trial_families())
        raise gin_config.ConfigError(
            f"{_without_gin_context(str(exc))}. A trial needs one of each: {families}; start from "
            "components/profiles/toy.gin (`include 'components/profiles/toy.gin'`)"
        ) from None
    gin_config.check_unused(loaded)
    return settings


def _without_gin_context(message: str) -> str:
    """The message without the "In call to configurable ..." lines gin appends."""
    return message.split("\n  In call to configurable", 1)[0].strip()


def _locate_values(loaded: gin_config.LoadedConfig, message: str) -> str:
    """Prefix each `training.FAMILY.NAME = ...` line of a validation message with where NAME was bound."""
    lines = []
    for line in message.splitlines():
        if found := re.match(r"([a-z_][\w.]*)\.(\w+) ?=", line):
            where = gin_config.locate(loaded, found.group(1), found.group(2))
            line = f"{where}: {line}" if where else line
        lines.append(line)
    return "\n".join(lines)


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

    def on_eval(step: int, metrics: dict[str, float]) -> None:
        tracker.log_metrics({f"eval/{k}": v for k, v in metrics.items()}, step=step)

    return Hooks(on_step=on_step, on_samples=on_samples, on_eval=on_eval)
