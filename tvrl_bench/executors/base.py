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
    """One trial process: the tvrl-train arguments, extra environment, and what it asks for."""

    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict, hash=False)
    num_gpus: int = 0
    log_path: str | None = None

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


def log_file(folder: Path, key: str, attempt: int) -> str:
    """Where attempt `attempt` of trial `key` writes its output: `<folder>/<key>.attempt<N>.log`."""
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
