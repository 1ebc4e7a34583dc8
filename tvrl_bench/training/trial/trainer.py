"""The one front door into training: a Trainer from config files, bindings and a folder.

    from tvrl_bench.training.trial.trainer import build_trainer

    trainer = build_trainer(["components/profiles/toy.gin"], ["training.trial.steps = 2"], folder)
    result = trainer.run()

`build_trainer` loads the config and checks it as a trial does (its values, the worlds of its parts, its prompts),
builds the components through gin, clears gin's config and returns a trainer that checkpoints to `folder`, with no
MLflow run: what the scripts of diagnostics/ and benchmarks/ train and measure. A script that measures another
credit router passes it (`credit=`); the trainer routes every batch with it. `trainer_for` is the one place a
Trainer is constructed: `build_trainer` calls it, and so does trial/run.py with the trial's MLflow run and hooks.
"""

from __future__ import annotations

from pathlib import Path

import gin

from tvrl_bench import config as gin_config
from tvrl_bench.credit.base import CreditRouter
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.loop import Hooks, Trainer
from tvrl_bench.training.parallel.sharding import ShardingSettings
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.trial.build import build_settings, build_sharding, locate_values
from tvrl_bench.training.trial.checks import check_prompts, check_values

__all__ = ["build_trainer", "trainer_for"]


def build_trainer(files: list[str | Path], bindings: list[str] | None, folder: str | Path, *,
                  credit: CreditRouter | None = None, cpu: bool = True, sharding: ShardingSettings | None = None,
                  progress: bool = False) -> Trainer:
    """A trainer for the config `files` and `bindings` (see the module), checkpointing to `folder`.

    credit: the router that routes every batch (default: the config's CREDIT). cpu: train on the CPU (default)
    rather than the accelerator the processes find. sharding: FSDP settings (default: the config's
    `training.sharding`). A config mistake is a ConfigError naming where it was bound.
    """
    loaded = gin_config.load_config([str(f) for f in files], list(bindings or []))
    try:
        check_values(loaded)
        sharding = sharding if sharding is not None else build_sharding(loaded)
        settings = build_settings(loaded)
        check_prompts(settings)
        processes = Processes(cpu=cpu, sharding=sharding)
        return trainer_for(loaded, settings, processes, CheckpointDir(folder), sharding=sharding, credit=credit,
                           progress=progress)
    finally:
        gin.clear_config()


def trainer_for(loaded: gin_config.LoadedConfig, settings: TrialSettings, processes: Processes,
                checkpoints: CheckpointDir, *, sharding: ShardingSettings | None = None,
                credit: CreditRouter | None = None, run_id: str | None = None, hooks: Hooks | None = None,
                progress: bool = False) -> Trainer:
    """The Trainer of built `settings` (with `credit` as its router when given); values that do not fit together
    (batch splits, processes) are a ConfigError naming where each was bound in `loaded`."""
    if credit is not None:
        settings.credit = credit  # before the trainer exists: it routes every batch with it
    try:
        return Trainer(settings, processes, checkpoints, run_id, hooks, progress, sharding)
    except ValueError as exc:
        raise gin_config.ConfigError(locate_values(loaded, str(exc))) from None
