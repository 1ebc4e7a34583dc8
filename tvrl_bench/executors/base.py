"""The executor interface: run trial commands somewhere, report each one's exit code."""

from __future__ import annotations

import os
import sys
from abc import ABC, abstractmethod
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TrialCommand:
    """One trial process: the tvrl-train arguments, extra environment, what it asks for, and which trial it is
    (`study`, `key`: how a scheduler whose jobs outlive the sweep, Slurm, names it)."""

    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict, hash=False)
    num_gpus: int = 0
    log_path: str | None = None
    study: str = ""
    key: str = ""

    def train_args(self, threads: int) -> list[str]:
        """The arguments of `tvrl-train` (`-m tvrl_bench.cli.train ARGS`) for a process with `threads` threads."""
        return [*self.args, "--threads", str(threads), "--no-progress", "--debug"]

    def argv(self, threads: int, gpus: int) -> list[str]:
        """The command line: plain tvrl-train, or `accelerate launch` over several GPUs."""
        train = ["-m", "tvrl_bench.cli.train", *self.train_args(threads)]
        if gpus > 1:
            launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", str(gpus)]
            return launch + train
        return [sys.executable, *train]


# The exit code a future resolves to for a trial that was never started (the sweep was stopped first).
NOT_STARTED = -1000
# ... for a trial cancelled from outside the sweep (`scancel`): recorded FAILED with the reason, not retried.
CANCELLED = -1001
# ... for a trial the sweep left running without it on a stop (a Slurm job left in the queue).
LEFT_RUNNING = -1002


class Executor(ABC):
    """Runs trial commands; `submit` returns a future of the process exit code."""

    workers: int = 1

    @abstractmethod
    def submit(self, command: TrialCommand) -> Future:
        """Start a trial; the future resolves to its exit code (0 = finished, NOT_STARTED if never started)."""

    def interrupt(self) -> None:
        """Ask every running trial to stop at its next step boundary (SIGTERM: it checkpoints and marks its run
        KILLED) and start no more; the futures resolve when the processes have exited."""

    def shutdown(self) -> None:
        """Release workers (and cancel what has not started)."""

    def live_trials(self, study: str) -> set[str]:
        """Keys of `study`'s trials still queued or running from an earlier sweep in a scheduler that outlives its
        sweep (Slurm): the sweep takes them over instead of refusing them as busy or starting them again."""
        return set()


def log_file(folder: Path, key: str, attempt: int, create: bool = True) -> str:
    """Where attempt `attempt` of trial `key` writes its output: `<folder>/<key>.attempt<N>.log` (the folder
    created unless `create` is False: a dry run writes nothing)."""
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    return str(folder / f"{key}.attempt{attempt}.log")


def build_executor(name: str, **settings: Any) -> Executor:
    """The registered executor `executors.<name>`, given the settings its constructor takes (others, and None
    values, are left out: `--workers` means nothing to Ray, `--address` nothing to local processes)."""
    from tvrl_bench import registry

    registry.import_components()
    names = [c.name for c in registry.components("executors")]
    if name not in names:
        raise registry.RegistryError(
            f"--executor {name}: no such executor{registry.suggest(name, names)} (registered: {', '.join(names)})"
        )
    component = registry.get(f"executors.{name}")
    accepted = {param for param, _ in component.parameters()}
    return component.target(**{k: v for k, v in settings.items() if k in accepted and v is not None})


def worker_environment(extra: dict[str, str], threads: int, gpus: list[int] | None) -> dict[str, str]:
    """The environment of a trial process: thread budget, pinned GPUs, the caller's PYTHONPATH."""
    env = {**os.environ, **extra, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "PYTHONUNBUFFERED": "1"}
    if gpus is not None:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpus)
    return env
