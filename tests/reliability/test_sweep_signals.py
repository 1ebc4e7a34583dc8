"""SIGTERM to a sweep with trials in flight: the trials checkpoint and stop, every run ends KILLED, the driver says
so in one line; a rerun resumes and ends exactly like an uninterrupted sweep (each key FINISHED once, the same
tables), with no orphan process. The reference sweep also checks how MLflow shows a study: the experiment opens on
its training runs (experiment kind) and each trial run is named by its axis values and seed."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.reliability.helpers import ROOT, assert_none_running, error_line, files_in, run, runs_of, written_outside
from tests.support import console_script
from tests.training.pauses import PAUSED_DIR_ENV, wait_for_pauses
from tvrl_bench.tracking.mlflow_run import EXPERIMENT_KIND, EXPERIMENT_KIND_TAG

pytestmark = pytest.mark.integration

TABLE_FILES = ("samplers.md", "samplers.csv", "samplers.tex", "samplers.html")


def sweep_args(tmp_path: Path, study: Path, db: str, out: str) -> list[str]:
    return [str(study), "--tracking-uri", f"sqlite:///{tmp_path / db}", "--out", str(tmp_path / out), "--no-progress",
            "--workers", "2"]


def trial_processes(marker: str) -> list[int]:
    """Pids of live processes whose command line mentions `marker` (the test's folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in command and "tvrl_bench.cli.train" in command:
                found.append(int(entry.name))
    return found


def finished_by_key(uri: str) -> dict[str, list]:
    found: dict[str, list] = {}
    for r in runs_of(uri, "tiny"):
        if r.data.tags.get("tvrl.role") == "trial" and r.info.status == "FINISHED":
            found.setdefault(r.data.tags["tvrl.trial_key"], []).append(r)
    return found


def test_sigterm_stops_a_sweep_cleanly_and_a_rerun_ends_like_an_uninterrupted_one(tmp_path, pausable_sweep):
    study, ref_uri, ref_out, reference = pausable_sweep
    before = files_in(tmp_path)
    assert reference.returncode == 0, reference.stderr[-4000:]
    from mlflow.tracking import MlflowClient

    assert MlflowClient(ref_uri).get_experiment_by_name("tiny").tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND
    trial_runs = [r for r in runs_of(ref_uri, "tiny") if r.data.tags.get("tvrl.role") == "trial"]
    assert sorted(r.info.run_name for r in trial_runs) == ["uniform-faulty_oracle-s0", "window3-faulty_oracle-s0"]

    # The sweep to stop: each trial pauses inside its third step (after two checkpoints) until the stop arrives.
    uri = f"sqlite:///{tmp_path / 'q.db'}"
    paused = tmp_path / "paused"  # each trial process announces its pause here (tests/training/faults.py)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "TVRL_FAULT": "pause", "TVRL_FAULT_AT": "3",
           PAUSED_DIR_ENV: str(paused)}
    env.pop("MLFLOW_TRACKING_URI", None)
    driver = subprocess.Popen([console_script("tvrl-sweep"), *sweep_args(tmp_path, study, "q.db", "out")],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_pauses(paused, driver, 2)
    assert len(list((tmp_path / "out" / "runs" / "tiny").glob("*/state.pt"))) == 2
    assert sum(r.info.status == "RUNNING" for r in runs_of(uri, "tiny") if r.data.tags.get("tvrl.role") == "trial") == 2
    driver.send_signal(signal.SIGTERM)  # the driver alone, as `kill PID` or a scheduler would
    stdout, stderr = driver.communicate(timeout=300)
    stopped = subprocess.CompletedProcess(driver.args, driver.returncode, stdout, stderr)
    assert stopped.returncode == 130, stderr[-4000:]
    line = error_line(stopped, "tvrl-sweep")
    assert "stopped by SIGTERM: 2 running trials checkpointed and marked KILLED" in line
    assert "rerun the same command to resume" in line
    assert trial_processes(str(tmp_path)) == []  # nothing left running
    assert_none_running(uri, "tiny")
    statuses = {r.data.tags.get("tvrl.role"): r.info.status for r in runs_of(uri, "tiny")}
    assert statuses == {"study": "KILLED", "trial": "KILLED"}
    for state in (tmp_path / "out" / "runs" / "tiny").glob("*/trial.json"):
        assert '"finished": false' in state.read_text()  # checkpointed mid-trial, not finished

    resumed = run(tmp_path, "tvrl-sweep", *sweep_args(tmp_path, study, "q.db", "out"))
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    assert "2 finished, 0 failed" in resumed.stdout
    assert trial_processes(str(tmp_path)) == []
    finished, reference_finished = finished_by_key(uri), finished_by_key(ref_uri)
    assert sorted(finished) == sorted(reference_finished) and all(len(v) == 1 for v in finished.values())
    assert {k: v[0].data.tags["tvrl.attempt"] for k, v in finished.items()} == {k: "2" for k in finished}
    assert {k: v[0].data.metrics["eval/overall"] for k, v in finished.items()} == {
        k: v[0].data.metrics["eval/overall"] for k, v in reference_finished.items()}
    assert_none_running(uri, "tiny")
    for name in TABLE_FILES:
        assert (tmp_path / "out" / "reports" / "tiny" / name).read_text() == \
            (ref_out / "reports" / "tiny" / name).read_text(), name
    assert not written_outside(tmp_path, before, ("out", "q.db", "q_artifacts", "paused"))
