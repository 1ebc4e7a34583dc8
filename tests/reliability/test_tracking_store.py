"""A tracking store that cannot be used fails in seconds, in one line naming the URI and the fix; every command
takes the URI from --tracking-uri, else $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time

import pytest

from tests.reliability.helpers import (ROOT, assert_error, assert_none_running, error_line, files_in, run, runs_of,
                                       write_study, written_outside)
from tests.support import console_script
from tests.training.conftest import FAST

pytestmark = pytest.mark.integration

TOY = "components/profiles/toy_v1.gin"
UNREACHABLE = "http://127.0.0.1:9"


def timed(*args, **kwargs):
    started = time.monotonic()
    result = run(*args, **kwargs)
    return result, time.monotonic() - started


def test_an_unreachable_server_fails_fast_for_every_command(tmp_path):
    study = write_study(tmp_path, "/nowhere")
    before = files_in(tmp_path)
    for script, args in (("tvrl-train", [TOY, "--out", str(tmp_path / "out")]),
                         ("tvrl-sweep", [str(study), "--out", str(tmp_path / "out")]),
                         ("tvrl-report", ["--study", "tiny", "--out", str(tmp_path / "out")])):
        result, seconds = timed(tmp_path, script, *args, "--tracking-uri", UNREACHABLE)
        assert_error(result, script, 2, UNREACHABLE, "start it")
        assert seconds < 30, f"{script} took {seconds:.0f} s to give up"  # (MLflow alone retries for minutes)
    # $MLFLOW_TRACKING_URI is honoured by every command when --tracking-uri is not given
    for script, args in (("tvrl-train", [TOY, "--out", str(tmp_path / "out")]),
                         ("tvrl-sweep", [str(study), "--out", str(tmp_path / "out")])):
        result = run(tmp_path, script, *args, env={"MLFLOW_TRACKING_URI": UNREACHABLE})
        assert_error(result, script, 2, UNREACHABLE)
    assert files_in(tmp_path) == before


def test_a_file_that_is_not_a_database_or_a_folder_is_named(tmp_path):
    study = write_study(tmp_path, "/nowhere")
    (tmp_path / "notes.db").write_text("these are my notes, not a database\n")
    (tmp_path / "folder.db").mkdir()
    with sqlite3.connect(tmp_path / "judgments.db") as connection:  # another tool's database (the annotation page's)
        connection.execute("CREATE TABLE judgments (pair TEXT, verdict TEXT)")
    connection.close()
    before = files_in(tmp_path)
    for uri, needles in ((f"sqlite:///{tmp_path / 'notes.db'}", ["notes.db is not an SQLite database", "--tracking-uri"]),
                         (f"sqlite:///{tmp_path / 'folder.db'}", ["folder.db is a folder", "name a file"]),
                         (f"sqlite:///{tmp_path / 'judgments.db'}", ["judgments.db is an SQLite database of something "
                                                                     "else (tables judgments)", "not an MLflow store"])):
        for script, args in (("tvrl-train", [TOY, "--out", str(tmp_path / "out")]),
                             ("tvrl-sweep", [str(study), "--out", str(tmp_path / "out")]),
                             ("tvrl-report", ["--study", "tiny", "--out", str(tmp_path / "out")])):
            result, seconds = timed(tmp_path, script, *args, "--tracking-uri", uri)
            assert_error(result, script, 2, uri, *needles)
            assert seconds < 30
    assert files_in(tmp_path) == before
    assert (tmp_path / "notes.db").read_text().startswith("these are my notes")
    with sqlite3.connect(tmp_path / "judgments.db") as connection:
        assert [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["judgments"]
    connection.close()


def test_two_sweeps_of_one_study_started_together_on_a_new_store_run_each_trial_once(tmp_path, tiny_policy_path):
    """Both create the new store at once (one makes MLflow's tables, the other waits); then the second is refused
    while the first sweeps, or, starting after it ended, finds every trial done. No trial runs twice, nothing is
    left RUNNING, no artifacts land in the working directory."""
    study = write_study(tmp_path, tiny_policy_path, axes="{'credit': ['uniform']}")
    uri = f"sqlite:///{tmp_path / 'store' / 'q.db'}"
    (tmp_path / "store").mkdir()
    before = files_in(tmp_path)
    commands = [[console_script("tvrl-sweep"), str(study), "--tracking-uri", uri, "--out", str(tmp_path / out),
                 "--no-progress", "--no-tables", "--workers", "1"] for out in ("out1", "out2")]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    env.pop("MLFLOW_TRACKING_URI", None)
    processes = [subprocess.Popen(c, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True) for c in commands]
    results = [(p, p.communicate(timeout=900)[1]) for p in processes]
    codes = sorted(p.returncode for p, _ in results)
    for p, stderr in results:
        assert "Traceback" not in stderr and "internal error" not in stderr, stderr[-3000:]
        if p.returncode == 2:
            assert "study tiny is being swept right now by process" in stderr and "run every trial twice" in stderr
    assert codes in ([0, 0], [0, 2]), [s[-2000:] for _, s in results]
    trials = [r for r in runs_of(uri, "tiny") if r.data.tags.get("tvrl.role") == "trial"]
    keys = [r.data.tags["tvrl.trial_key"] for r in trials if r.info.status == "FINISHED"]
    assert len(keys) == len(set(keys)) == 1
    assert_none_running(uri, "tiny")
    assert not written_outside(tmp_path, before, ("out1", "out2", "store"))
    assert any(p.is_file() for p in (tmp_path / "store" / "q_artifacts").rglob("*"))  # the trials' artifacts, beside the store


def _train_command(tmp_path, tiny_policy_path, uri):
    bindings = [*FAST, f"policies.toy.path = '{tiny_policy_path}'", "training.trial.checkpoint_every = 1",
                "training.trial.sample_videos = 0"]
    return [console_script("tvrl-train"), TOY, "--steps", "12", "--tracking-uri", uri, "--out", str(tmp_path / "out"),
            "--no-progress", "--gin_bindings", *bindings]


def _lock_once_past(tmp_path, process, step: int, seconds: float | None) -> None:
    """Once the trial's checkpoint passes `step`, hold an exclusive lock on the store for `seconds` (None: until the
    process ends)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and process.poll() is None:
        infos = list((tmp_path / "out").glob("*/*/trial.json"))
        try:
            if infos and json.loads(infos[0].read_text())["step"] >= step:
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    connection = sqlite3.connect(tmp_path / "t.db", timeout=60, isolation_level=None)
    connection.execute("BEGIN EXCLUSIVE")
    try:
        until = time.monotonic() + (seconds if seconds is not None else 600)
        while time.monotonic() < until and process.poll() is None:
            time.sleep(0.2)
    finally:
        connection.execute("ROLLBACK")
        connection.close()


def test_a_store_locked_mid_trial_is_waited_for_then_one_line_and_a_rerun_resumes(tmp_path, tiny_policy_path):
    uri = f"sqlite:///{tmp_path / 't.db'}"
    command = _train_command(tmp_path, tiny_policy_path, uri)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "TVRL_STORE_PATIENCE_S": "3"}
    env.pop("MLFLOW_TRACKING_URI", None)

    # Locked for longer than the patience: one line, the checkpoint kept.
    trial = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    _lock_once_past(tmp_path, trial, 2, None)
    stderr = trial.communicate(timeout=600)[1]
    assert trial.returncode == 2, stderr[-3000:]
    assert "Traceback" not in stderr and "SQLAlchemy" not in stderr, stderr[-3000:]
    line = error_line(subprocess.CompletedProcess(command, 2, "", stderr), "tvrl-train")
    assert "stayed locked by another process for more than 3 s" in line and "rerun the same command" in line
    [info] = (tmp_path / "out").glob("*/*/trial.json")
    stopped_at = json.loads(info.read_text())["step"]
    assert stopped_at >= 2 and (info.parent / "state.pt").is_file()

    # The rerun resumes; a lock of a few seconds within the patience is waited out with one warning.
    trial = subprocess.Popen(command, cwd=tmp_path, env={**env, "TVRL_STORE_PATIENCE_S": "120"},
                             stderr=subprocess.PIPE, text=True)
    _lock_once_past(tmp_path, trial, stopped_at + 2, 30)  # (a lock of 15 s passed unnoticed: SQLite waits itself)
    stderr = trial.communicate(timeout=600)[1]
    assert trial.returncode == 0, stderr[-3000:]
    assert "Traceback" not in stderr and stderr.count("is locked by another process; waiting") == 1, stderr[-3000:]
    runs = runs_of(uri, "trials")
    assert_none_running(uri, "trials")
    [finished] = [r for r in runs if r.info.status == "FINISHED"]
    [first] = [r for r in runs if r.info.run_id != finished.info.run_id]
    assert finished.data.tags["tvrl.resumed_from"] == first.info.run_id and first.info.status in ("FAILED", "KILLED")
