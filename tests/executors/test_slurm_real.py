"""`tvrl-sweep --executor slurm` against a real one-node Slurm cluster (slurm_cluster.py): a toy study of 2 arms x 2
seeds whose trials hold inside their second step (slurm_gate.py) while the test requeues one job (it resumes from
its checkpoint), cancels another (its trial is FAILED with the reason), then reruns the sweep, SIGKILLs it with
that job in flight and reruns it again (the job is taken over, nothing runs twice). Every trial ends with exactly
one FINISHED run, none is left RUNNING, and the study's tables equal those of the local executor's run of the
same trial keys (the toy is deterministic, resumes included)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.executors.slurm_cluster import slurm_cluster
from tests.reliability.helpers import ROOT, assert_none_running, runs_of
from tests.support import console_script
from tests.sweeps.helpers import write_study
from tests.training.pauses import PAUSED_DIR_ENV, wait_for_pauses

pytestmark = pytest.mark.integration

TABLE_FILES = ("samplers.md", "samplers.csv", "samplers.tex", "samplers.html")


def sweep(tmp_path: Path, env: dict, db: str, out: str, *flags: str, stderr=subprocess.PIPE) -> subprocess.Popen:
    args = [str(tmp_path / "tiny.gin"), "--tracking-uri", f"sqlite:///{tmp_path / db}", "--out", str(tmp_path / out),
            "--no-progress", *flags]
    return subprocess.Popen([console_script("tvrl-sweep"), *args], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=stderr, text=True)


def slurm(env: dict, *argv: str) -> str:
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout


def jobs(env: dict) -> dict[str, tuple[str, str]]:
    """Every job the controller knows: id -> (name, state)."""
    lines = slurm(env, "squeue", "--noheader", "--states=all", "--format=%i|%j|%T").split()
    return {i: (name, state) for i, name, state in (line.split("|") for line in lines)}


def wait_until(condition, what: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout_s:.0f} s for {what}"
        time.sleep(0.3)


def trial_runs(uri: str) -> dict[str, list]:
    found: dict[str, list] = {}
    for run in runs_of(uri, "tiny"):
        if run.data.tags.get("tvrl.role") == "trial":
            found.setdefault(run.data.tags["tvrl.trial_key"], []).append(run)
    return found


def test_a_study_runs_on_slurm_survives_requeue_cancel_and_a_killed_sweep(tmp_path, tiny_policy_path):
    gate = tmp_path / "gate"
    gate.mkdir()
    reward = tmp_path / "slurm_gate.gin"
    reward.write_text("import tests.executors.slurm_gate\nREWARD = @rewards.slurm_gate()\n")
    write_study(tmp_path, tiny_policy_path, seeds="[0, 1]", steps=3, extra=("training.trial.checkpoint_every = 1",),
                axes=f"{{'credit': ['uniform', 'window3'], 'reward': ['{reward}']}}")
    base = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    base.update({"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    fast = ("--executor", "slurm", "--executor-binding", "executors.slurm.poll_s = 0.5")
    uri = f"sqlite:///{tmp_path / 's.db'}"
    with slurm_cluster(tmp_path / "slurm") as cluster:
        env = {**base, **cluster, "TVRL_GATE_DIR": str(gate), "TVRL_GATE_AT": "2", PAUSED_DIR_ENV: str(gate / "1")}
        reference = sweep(tmp_path, base, "ref.db", "ref", "--workers", "2")  # the local executor, meanwhile
        first = sweep(tmp_path, env, "s.db", "out", *fast, "--no-tables")  # the tables: once, at the end
        wait_for_pauses(gate / "1", first, 2)  # two jobs run (the node's 2 CPUs), each held in its second step
        (requeued, _), (cancelled, _) = sorted((i, n) for i, (n, s) in jobs(env).items() if s == "RUNNING")
        slurm(env, "scontrol", "requeue", requeued)
        slurm(env, "scancel", cancelled)
        wait_until(lambda: jobs(env)[requeued][1] == "PENDING", "the requeued job to wait in the queue")
        slurm(env, "scontrol", "update", f"JobId={requeued}", "StartTime=now")  # Slurm holds it ~2 min otherwise
        (gate / "open").touch()
        stdout, stderr = first.communicate(timeout=300)
        assert first.returncode == 1, stderr[-4000:]  # the cancelled trial failed
        key_of = {i: name.split(".")[-1] for i, (name, _) in jobs(env).items()}
        requeued_key, cancelled_key = key_of[requeued], key_of[cancelled]
        assert f"FAILED {cancelled_key}" in stderr and f"Slurm job {cancelled} was cancelled (scancel)" in stderr

        runs = trial_runs(uri)
        assert_none_running(uri, "tiny")
        finished = [r for r in runs[requeued_key] if r.info.status == "FINISHED"]
        assert len(finished) == 1 and finished[0].data.tags["tvrl.slurm_job_id"] == requeued
        assert finished[0].data.tags["tvrl.slurm_restarts"] == "1"  # the same job, started again by Slurm
        log = (tmp_path / "out" / "logs" / "tiny" / f"{requeued_key}.attempt1.log").read_text()
        assert f"resuming trial {requeued_key} from step 2" in log  # from the checkpoint taken at the requeue
        (failed,) = runs[cancelled_key]
        assert failed.info.status == "FAILED" and "cancelled (scancel)" in failed.data.tags["tvrl.error"]
        assert sorted(len([r for r in v if r.info.status == "FINISHED"]) for v in runs.values()) == [0, 1, 1, 1]

        # Rerun: only the cancelled trial runs, held at its first step's reward; SIGKILL the sweep meanwhile.
        (gate / "open").unlink()
        env.update({"TVRL_GATE_AT": "1", PAUSED_DIR_ENV: str(gate / "2")})
        second = sweep(tmp_path, env, "s.db", "out", *fast, "--no-tables")
        wait_for_pauses(gate / "2", second, 1)
        (job,) = [i for i, (name, state) in jobs(env).items() if name.endswith(cancelled_key) and state == "RUNNING"]
        second.send_signal(signal.SIGKILL)
        second.communicate(timeout=60)

        # The rerun takes the job over instead of refusing its busy folder or submitting it again.
        errors = tmp_path / "third.err"
        with open(errors, "w") as err:
            third = sweep(tmp_path, env, "s.db", "out", *fast, stderr=err)
            wait_until(lambda: f"following Slurm job {job}" in errors.read_text(), "the rerun to take the job over")
            (gate / "open").touch()
            stdout, _ = third.communicate(timeout=300)
        assert third.returncode == 0, errors.read_text()[-4000:]
        assert "1 finished, 0 failed, 3 skipped" in stdout
        assert max(int(i) for i in jobs(env)) == int(job)  # nothing was submitted after it
        runs = trial_runs(uri)
        assert_none_running(uri, "tiny")
        assert all(len([r for r in v if r.info.status == "FINISHED"]) == 1 for v in runs.values()) and len(runs) == 4
        assert [r.data.tags["tvrl.slurm_job_id"] for r in runs[cancelled_key] if r.info.status == "FINISHED"] == [job]

        _, ref_err = reference.communicate(timeout=300)
        assert reference.returncode == 0, ref_err[-4000:]
    assert sorted(trial_runs(f"sqlite:///{tmp_path / 'ref.db'}")) == sorted(runs)  # the same trial keys
    for name in TABLE_FILES:
        assert (tmp_path / "out" / "reports" / "tiny" / name).read_text() == \
            (tmp_path / "ref" / "reports" / "tiny" / name).read_text(), name
