"""What the gradient benchmarks share: the profile arguments and a trainer built from them (no MLflow run)."""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from typing import Iterator

import gin
import torch

from tvrl_bench.config import load_config
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.distributed import Processes
from tvrl_bench.training.loop import Trainer
from tvrl_bench.training.settings import TrialSettings


def add_profile_arguments(parser: argparse.ArgumentParser) -> None:
    """FILES (presets after the profile), --profile and --gin_bindings."""
    parser.add_argument("files", nargs="*", help="gin files after the profile (presets to swap in)")
    parser.add_argument("--profile", default="components/profiles/toy.gin", help="the profile measured (default: the toy profile)")
    parser.add_argument("--gin_bindings", nargs="*", default=[], help="extra gin bindings, e.g. 'training.trial.prompts_per_step = 16'")


@contextlib.contextmanager
def profile_trainer(args: argparse.Namespace) -> Iterator[Trainer]:
    """A one-thread CPU trainer for the profile, files and bindings in `args`, checkpointing to a scratch folder."""
    torch.set_num_threads(1)
    load_config([args.profile, *args.files], args.gin_bindings)
    settings = TrialSettings()
    gin.clear_config()
    with tempfile.TemporaryDirectory() as folder:
        yield Trainer(settings, Processes(cpu=True), CheckpointDir(folder), None, progress=False)
