"""Driving the console scripts as a new user would, and the checks every reliability test makes.

Each scene runs a command in a fresh folder (its cwd) with a clean environment: no $MLFLOW_TRACKING_URI unless
the test sets one. `files_in(folder)` snapshots what exists, so a test can assert that nothing was written
outside --out (and the tracking database).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from mlflow.tracking import MlflowClient

from tests.support import console_script
from tests.sweeps.helpers import write_study  # noqa: F401  (re-exported for the tests)

ROOT = Path(__file__).resolve().parents[2]


def run(cwd: Path, script: str, *args: str, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    environment.update({"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **(env or {})})
    return subprocess.run([console_script(script), *args], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=timeout)


def error_line(result: subprocess.CompletedProcess, prog: str) -> str:
    """The one error line a command ended with; fails when it printed a traceback or no such line."""
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith(f"{prog}: ")]
    assert lines, f"no '{prog}: ...' line in:\n{result.stderr[-3000:]}"
    return lines[-1]


def assert_error(result: subprocess.CompletedProcess, prog: str, code: int, *needles: str) -> str:
    """The command exited with `code` and one error line holding every needle (the place, the value, the fix)."""
    assert result.returncode == code, f"exit {result.returncode}, wanted {code}:\n{result.stderr[-3000:]}"
    line = error_line(result, prog)
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    return line


def files_in(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*") if p.is_file()}


def written_outside(folder: Path, before: set[Path], allowed: tuple[str, ...]) -> set[Path]:
    """Files that appeared in `folder` outside the allowed relative paths (folders or files)."""
    new = files_in(folder) - before
    return {p for p in new if not any(p == Path(a) or Path(a) in p.parents for a in allowed)}


def runs_of(uri: str, experiment: str) -> list:
    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    return client.search_runs([found.experiment_id], max_results=1000) if found else []


def assert_none_running(uri: str, experiment: str) -> None:
    running = [r.info.run_name for r in runs_of(uri, experiment) if r.info.status == "RUNNING"]
    assert not running, f"runs left RUNNING: {running}"
