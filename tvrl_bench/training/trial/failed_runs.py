"""A FAILED MLflow run for a trial that failed before its own run existed, so reports list it."""

from __future__ import annotations

import logging

import gin

from tvrl_bench import config as gin_config, registry
from tvrl_bench.tracking import params as run_params
from tvrl_bench.tracking.mlflow_run import record_failed_run
from tvrl_bench.training.trial.options import TrialOptions, run_tags

log = logging.getLogger("tvrl_bench.trial")


def first_line(exc: BaseException) -> str:
    """`Type: first line of the message`, for tag tvrl.error (MLflow caps tag values: 4000 characters kept)."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0] if message else ''}"[:4000]


def record_failure(loaded: gin_config.LoadedConfig, key: str, options: TrialOptions, exc: BaseException) -> None:
    """Log a FAILED run for a trial that failed before its own run existed (its error in tag tvrl.error)."""
    seed = _bound("training.trial.seed", 0)
    steps = _bound("training.trial.steps", 100)
    every_axis = {**run_params.presets_in_files(loaded.parsed_files, registry.axes()), **options.labels}
    names = {**{axis: every_axis[axis] for axis in registry.logged_axes() if axis in every_axis}, **options.labels}
    method = run_params.method_from_presets(every_axis, base=steps == 0)
    params = {**names, "method": method, "seed": seed, "profile": run_params.profile_name(loaded.parsed_files)}
    if options.labels:
        name = run_params.axis_run_name(options.labels, seed, base=method == "base")
    elif set(registry.logged_axes()) <= set(names):
        name = run_params.run_name(names, seed, options.study)
    else:
        name = "-".join([*names.values(), f"s{seed}"])
    error = first_line(exc)
    try:
        run_id = record_failed_run(options.tracking_uri, options.experiment, name,
                                   run_tags(key, options, options.attempt or 1), params, error)
        log.info("trial %s failed before training; recorded FAILED run %s", key, run_id)
    except Exception as record_error:  # the store itself may be the problem: the original error matters more
        log.warning("could not record the failed trial %s in MLflow: %s", key, record_error)


def _bound(name: str, default):
    """A plain value the parsed config binds to `name`, else `default` (nothing was built to ask)."""
    try:
        value = gin.query_parameter(name)
    except ValueError:
        return default
    return value if isinstance(value, (int, float, str)) else default
