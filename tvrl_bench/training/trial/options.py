"""A trial's options (where it logs and keeps its files, how a sweep identifies it), its result, and the name
and tags its MLflow run gets from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tvrl_bench.tracking import params as run_params
from tvrl_bench.tracking.store import DEFAULT_TRACKING_URI


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
    """A finished trial: its run, status, final evaluation's metrics (logged as eval/*) and wide evaluation's
    (wide_eval/*; empty without one), key and checkpoint folder."""

    run_id: str | None
    status: str
    metrics: dict[str, float]
    key: str
    checkpoint: Path
    wide_metrics: dict[str, float] = field(default_factory=dict)


def run_name(names: dict[str, str], seed: int, method: str, options: TrialOptions) -> str:
    """A sweep's trial is named by its axis values and seed (`sage-window3-s0`); a lone trial by its presets."""
    if options.labels:
        return run_params.axis_run_name(options.labels, seed, base=method == "base")
    return run_params.run_name(names, seed, options.study)


def run_tags(key: str, options: TrialOptions, attempt: int) -> dict[str, str]:
    """The MLflow tags of a trial's run: its key, attempt and role, the study and parent run, the caller's tags."""
    tags = {"tvrl.trial_key": key, "tvrl.attempt": str(attempt), "tvrl.role": "trial", **options.tags}
    if options.study:
        tags["tvrl.study"] = options.study
    if options.parent_run_id:
        tags["mlflow.parentRunId"] = options.parent_run_id
    return tags
