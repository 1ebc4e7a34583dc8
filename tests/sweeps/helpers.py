"""Tiny studies for sweep tests: two or four short trials of a narrow random toy policy."""

from __future__ import annotations

from pathlib import Path

from tests.training.conftest import FAST


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
    ]
    path = folder / f"{name}.gin"
    path.write_text("\n".join(lines) + "\n")
    return path
