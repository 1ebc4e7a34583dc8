"""`tvrl-sweep --executor slurm` against fake Slurm commands (tests/executors/fake_slurm.py): --dry-run prints the
first trial's job script (flags and executor bindings in it, nothing submitted or written), bad settings are one
line and exit 2 before anything is submitted, and Ctrl-C leaves the jobs queued (saying so) or cancels them."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.executors.fake_slurm import FakeSlurm
from tests.sweeps.helpers import write_study
from tests.tracking.helpers import fresh_store
from tvrl_bench.cli.sweep import main


@pytest.fixture
def fake(tmp_path, monkeypatch) -> FakeSlurm:
    monkeypatch.chdir(tmp_path)
    return FakeSlurm(tmp_path / "slurm").install(monkeypatch)


@pytest.fixture
def study(tmp_path, tiny_policy_path):
    return write_study(tmp_path, tiny_policy_path, seeds="[0, 1]")


def sweep(study, uri: str, out, *flags: str) -> int:
    return main([str(study), "--tracking-uri", uri, "--out", str(out), "--no-progress", "--executor", "slurm", *flags])


def test_dry_run_prints_the_first_trials_job_script_and_submits_nothing(tmp_path, fake, study, capsys):
    config = tmp_path / "cluster.gin"
    config.write_text("executors.slurm.setup = 'source /opt/venv/bin/activate'\nexecutors.slurm.partition = 'debug'\n")
    code = sweep(study, f"sqlite:///{tmp_path / 'q.db'}", tmp_path / "out", "--dry-run", "--executor-config",
                 str(config), "--partition", "gpu", "--time-limit", "1-00:00:00", "--sbatch-line=--account=lab",
                 "--cpus-per-trial", "4")
    out = capsys.readouterr().out
    assert code == 0
    script = out[out.index("#!/bin/bash"):]
    assert "#SBATCH --partition=gpu" in script  # the flag wins over the binding
    assert "#SBATCH --time=1-00:00:00" in script and "#SBATCH --account=lab" in script
    assert "#SBATCH --cpus-per-task=4" in script and "--threads 4" in script
    assert "source /opt/venv/bin/activate" in script  # from the executor config
    assert "#SBATCH --job-name=tvrl.tiny." in script and "-m tvrl_bench.cli.train" in script
    assert fake.calls("sbatch") == [] and not (tmp_path / "out").exists()


@pytest.mark.parametrize("flags, needle", [
    (("--partition", "gpux"), "--partition gpux: no such Slurm partition; did you mean 'gpu'?"),
    (("--time-limit", "3:00:00"), "--time-limit 3:00:00: longer than partition debug allows (60 min)"),
    (("--gpus-per-node", "2"), "--gpus-per-node 2: the nodes of partition debug have no GPUs"),
    (("--executor-binding", "executors.slurm.partiton = 'gpu'"), "partiton"),
])
def test_bad_settings_are_one_line_and_exit_2_before_anything_is_submitted(tmp_path, fake, study, capsys, flags,
                                                                            needle):
    code = sweep(study, f"sqlite:///{tmp_path / 'q.db'}", tmp_path / "out", *flags)
    err = capsys.readouterr().err
    assert code == 2
    (line,) = [line for line in err.splitlines() if line.startswith("tvrl-sweep: ")]
    assert needle in line and "Traceback" not in err
    assert fake.calls("sbatch") == []


def test_sbatch_missing_is_one_line_naming_the_setting_and_the_fix(tmp_path, monkeypatch, study, capsys):
    monkeypatch.setenv("PATH", os.path.dirname(os.path.realpath(os.sys.executable)))
    code = sweep(study, f"sqlite:///{tmp_path / 'q.db'}", tmp_path / "out")
    err = capsys.readouterr().err
    assert code == 2
    (line,) = [line for line in err.splitlines() if line.startswith("tvrl-sweep: ")]
    assert "--executor slurm: sbatch, squeue, scontrol, scancel, sinfo not found on PATH" in line
    assert "login node" in line


def interrupt_when(fake: FakeSlurm, logs: Path, jobs: int, then=None) -> threading.Thread:
    """A thread that marks job 101 RUNNING once the sweep has `jobs` job ids (each noted in its trial's log under
    `logs`), sends this process SIGINT (a Ctrl-C) and then runs `then`."""

    def submitted() -> int:
        return sum("submitted as Slurm job" in p.read_text() for p in logs.glob("*.log"))

    def act():
        deadline = time.monotonic() + 120
        while submitted() < jobs and time.monotonic() < deadline:
            time.sleep(0.05)
        fake.set("101", "RUNNING")
        time.sleep(1.0)  # a poll sees it running
        os.kill(os.getpid(), signal.SIGINT)
        if then:
            then()

    thread = threading.Thread(target=act, daemon=True)
    thread.start()
    return thread


def test_ctrl_c_leaves_the_jobs_queued_and_says_so(tmp_path, tmp_path_factory, fake, study, capsys, caplog):
    interrupt_when(fake, tmp_path / "out" / "logs" / "tiny", 4)
    code = sweep(study, fresh_store(tmp_path_factory, tmp_path), tmp_path / "out",
                 "--executor-binding", "executors.slurm.poll_s = 0.1")
    err = capsys.readouterr().err
    assert code == 130
    said = caplog.text  # the executor's warning, logged
    assert "left 4 Slurm job(s) in the queue (101 102 103 104)" in said and "scancel 101 102 103 104" in said
    assert "4 left running in the scheduler's queue" in err
    assert fake.calls("scancel") == []


def test_ctrl_c_with_cancel_on_stop_cancels_the_queued_jobs_and_stops_the_running_one(tmp_path, tmp_path_factory,
                                                                                         fake, study, capsys):
    def trial_stops():  # the running trial gets SIGTERM, checkpoints and exits 130
        deadline = time.monotonic() + 60
        while not any("--signal=TERM" in c for c in fake.calls("scancel")) and time.monotonic() < deadline:
            time.sleep(0.05)
        fake.set("101", "FAILED", 130)

    interrupt_when(fake, tmp_path / "out" / "logs" / "tiny", 4, then=trial_stops)
    code = sweep(study, fresh_store(tmp_path_factory, tmp_path), tmp_path / "out", "--cancel-on-stop",
                 "--executor-binding", "executors.slurm.poll_s = 0.1")
    err = capsys.readouterr().err
    assert code == 130
    assert fake.calls("scancel") == ["scancel 102 103 104", "scancel --signal=TERM --full 101"]
    assert "1 running trials checkpointed and marked KILLED" in err and "3 not started" in err
