"""The profile a diagnostic measures: its arguments, its trainer (no MLflow run) and the credit routers it compares.

    parser = script_parser(__file__, __doc__)
    add_profile_arguments(parser, seed=True)        # FILES, --profile, --gin_bindings, --checkpoint, --seed
    ...
    router = router_of(args, "components/credit/located.gin")
    with profile_trainer(args, credit=router) as trainer:
        batch = trainer.collect(0)
    with profile_trial(args) as (trial, trainer):           # its parts too: trial.ode_sample, trial.score, ...
        ...

The trial and its trainer are built by the front door into training (training/trial/built.py), one thread on
the CPU, checkpointing to a scratch folder removed afterwards. A config mistake is a ConfigError and a bad
--checkpoint a CheckpointError, which a script's `run_script` prints as one line.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from typing import Iterator

import gin
import torch

from tvrl_bench import registry
from tvrl_bench.config import load_config
from tvrl_bench.credit.base import CreditRouter
from tvrl_bench.training.checkpoint import CheckpointDir, CheckpointError
from tvrl_bench.training.loop import Trainer
from tvrl_bench.world.declaration import DEFAULT_PROFILE
from tvrl_bench.training.trial.built import BuiltTrial, build_trial_and_trainer


def add_profile_arguments(parser: argparse.ArgumentParser, seed: bool = False) -> None:
    """FILES (presets after the profile), --profile, --gin_bindings and --checkpoint; with `seed`, also --seed (the
    trial seed, which `profile_trainer` binds)."""
    parser.add_argument("files", nargs="*", help="gin files after the profile (presets to swap in)")
    parser.add_argument("--profile", default=DEFAULT_PROFILE,
                        help=f"the profile measured (default: the default regime's, {DEFAULT_PROFILE})")
    parser.add_argument("--gin_bindings", nargs="*", default=[], help="extra gin bindings, e.g. 'training.trial.prompts_per_step = 16'")
    parser.add_argument("--checkpoint", default=None,
                        help="a trial's run folder (OUT/runs/STUDY/KEY, holding state.pt): measure at its saved weights "
                             "instead of the base's; the profile and files must be the trial's own configuration")
    if seed:
        parser.add_argument("--seed", type=int, default=0, help="the trial seed: prompts drawn and noise (default 0)")


@contextlib.contextmanager
def profile_trial(args: argparse.Namespace, credit: CreditRouter | None = None) -> Iterator[tuple[BuiltTrial, Trainer]]:
    """The built trial of the profile, files and bindings in `args` (its --seed bound) and its one-thread CPU trainer
    (its --checkpoint loaded), routing credit with `credit` (default: the config's router)."""
    torch.set_num_threads(1)
    seed = [f"training.trial.seed = {args.seed}"] if getattr(args, "seed", None) is not None else []
    with tempfile.TemporaryDirectory() as folder:
        trial, trainer = build_trial_and_trainer([args.profile, *args.files], [*args.gin_bindings, *seed], folder,
                                                 credit=credit)
        if getattr(args, "checkpoint", None):
            saved = CheckpointDir(args.checkpoint).load()
            if saved is None:
                raise CheckpointError(f"--checkpoint {args.checkpoint}: no state.pt there; pass a trial's run folder "
                                      "(OUT/runs/STUDY/KEY)")
            print(f"measuring at the weights of {args.checkpoint}, step {trainer.load_state(saved)}")
        yield trial, trainer


@contextlib.contextmanager
def profile_trainer(args: argparse.Namespace, credit: CreditRouter | None = None) -> Iterator[Trainer]:
    """`profile_trial`'s trainer alone."""
    with profile_trial(args, credit) as (_, trainer):
        yield trainer


def router_of(args: argparse.Namespace, preset: str) -> CreditRouter:
    """The credit router that `preset` (a components/credit/*.gin file) binds, on top of the profile, files and
    bindings in `args` (so a profile's own router bindings apply); gin's config is cleared afterwards."""
    load_config([args.profile, *args.files, preset], list(args.gin_bindings))
    try:
        return registry.build("CREDIT")
    finally:
        gin.clear_config()
