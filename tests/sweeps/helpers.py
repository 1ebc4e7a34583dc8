"""Tiny studies for sweep tests (two or four short trials of a narrow random toy policy), an executor that runs
their trials in this process, and the driver's options for them."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

from tests.training.conftest import FAST
from tvrl_bench.executors.base import Executor, TrialCommand
from tvrl_bench.sweeps.driver import SweepOptions


def write_study(folder: Path, policy: str, name: str = "tiny", axes: str | None = None, seeds: str = "[0]",
                steps: int = 2, extra: tuple[str, ...] = ()) -> Path:
    axes = axes or "{'credit': ['uniform', 'window3']}"
    bindings = [*FAST, f"policies.toy.path = '{policy}'", f"training.trial.steps = {steps}", *extra]
    lines = [
        f"sweeps.study.name = '{name}'",
        f"sweeps.study.axes = {axes}",
        f"sweeps.study.seeds = {seeds}",
        "sweeps.study.tables = ['samplers']",
        "sweeps.study.bindings = [",
        *[f"    {b!r}," for b in bindings],
        "]",
        "sweeps.study.profile = 'components/profiles/toy_v1.gin'",  # the tiny policy's regime: v1 world, GRPO
    ]
    path = folder / f"{name}.gin"
    path.write_text("\n".join(lines) + "\n")
    return path


class InProcess(Executor):
    """Runs tvrl-train's entry point for each command in this process (in the main thread, where a trial can
    install its signal handlers), with the command line a worker would get."""

    def __init__(self):
        self.codes: list[int] = []

    def submit(self, command: TrialCommand) -> Future:
        from tvrl_bench.cli.train import main

        argv = command.argv(threads=1, gpus=0)
        assert argv[1:3] == ["-m", "tvrl_bench.cli.train"]
        code = main([*argv[3:], "--cpu"])
        self.codes.append(code)
        future: Future = Future()
        future.set_result(code)
        return future


def options(uri: str, tmp_path: Path, **kw) -> SweepOptions:
    return SweepOptions(tracking_uri=uri, out_dir=str(tmp_path / "out"), progress=False, regenerate_tables=False, **kw)
