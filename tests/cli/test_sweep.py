"""`tvrl-sweep` end to end: two workers, kill and resume, retries, Ray with a tracking server, early errors."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.support import console_script
from tests.training.pauses import PAUSED_DIR_ENV, wait_for_pauses
from tests.sweeps.helpers import write_study

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def sweep(tmp_path: Path, study: Path, *args: str, uri: str | None = None, out: str = "out", env: dict | None = None):
    command = [console_script("tvrl-sweep"), str(study), "--tracking-uri", uri or f"sqlite:///{tmp_path / 'q.db'}",
               "--out", str(tmp_path / out), "--no-progress", *args]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=1200)


def study_runs(uri: str, study: str):
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(study)
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    parents = [r for r in runs if r.data.tags.get("tvrl.role") == "study"]
    trials = [r for r in runs if r.data.tags.get("tvrl.role") == "trial"]
    return client, parents, trials


def final_overall(trials) -> dict[str, float]:
    return {r.data.tags["tvrl.trial_key"]: r.data.metrics["eval/overall"] for r in trials if r.info.status == "FINISHED"}


def test_a_killed_sweep_resumes_without_duplicates_and_ends_like_an_uninterrupted_one(tmp_path, pausable_sweep):
    # The study's reward scores like the toy oracle; in the sweep to kill, $TVRL_FAULT pauses each trial in its
    # third step (after two checkpoints), so the kill lands mid-trial however fast the machine is.
    study, ref_uri, ref_out, reference = pausable_sweep
    # The uninterrupted reference: two workers, every trial a child of one parent run, the table at the end.
    assert reference.returncode == 0, reference.stderr[-4000:]
    assert "2 finished, 0 failed, 0 skipped" in reference.stdout
    _, parents, reference_trials = study_runs(ref_uri, "tiny")
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    assert len(reference_trials) == 2 and all(r.info.status == "FINISHED" for r in reference_trials)
    assert all(r.data.tags["mlflow.parentRunId"] == parents[0].info.run_id for r in reference_trials)
    assert {(r.data.params["credit"], r.data.params["method"], r.data.params["seed"]) for r in reference_trials} == {
        ("uniform", "GRPO", "0"), ("window3", "TVRL", "0")}
    assert {r.info.run_name for r in reference_trials} == {"uniform-faulty_oracle-s0", "window3-faulty_oracle-s0"}
    assert "sage" in (ref_out / "reports" / "tiny" / "samplers.md").read_text().lower()
    done = sweep(tmp_path, study, "--dry-run", uri=ref_uri, out=str(ref_out))
    assert done.returncode == 0 and done.stdout.count(" done ") == 2

    uri = f"sqlite:///{tmp_path / 'q.db'}"
    command = [console_script("tvrl-sweep"), str(study), "--tracking-uri", uri, "--out", str(tmp_path / "out"),
               "--no-progress", "--workers", "2", "--no-tables"]
    paused = tmp_path / "paused"  # each trial process announces its pause here (tests/training/faults.py)
    pausing = {**os.environ, "PYTHONPATH": str(ROOT), "TVRL_FAULT": "pause", "TVRL_FAULT_AT": "3",
               PAUSED_DIR_ENV: str(paused)}
    driver = subprocess.Popen(command, cwd=tmp_path, env=pausing, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for_pauses(paused, driver, 2)
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and every trial process
    driver.wait()

    resumed = sweep(tmp_path, study, "--workers", "2", "--no-tables")
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    _, parents, trials = study_runs(uri, "tiny")
    finished_keys = [r.data.tags["tvrl.trial_key"] for r in trials if r.info.status == "FINISHED"]
    assert len(finished_keys) == len(set(finished_keys)) == 2
    killed = [r for r in trials if r.info.status == "KILLED"]
    assert killed, "the run interrupted by SIGKILL must be marked KILLED"
    assert all(r.info.status in ("FINISHED", "KILLED") for r in trials)
    assert final_overall(trials) == final_overall(reference_trials)
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"


def test_a_failing_trial_is_retried_then_recorded_failed_while_the_others_finish(tmp_path, tiny_policy_path):
    faulty = tmp_path / "faulty_oracle.gin"
    faulty.write_text("import tests.training.faults\nREWARD = @rewards.faulty_oracle()\n")
    study = write_study(tmp_path, tiny_policy_path, axes=f"{{'reward': ['toy_oracle', '{faulty}']}}")
    result = sweep(tmp_path, study, "--workers", "2", "--max-attempts", "2", env={"TVRL_FAULT": "nan", "TVRL_FAULT_AT": "1"})
    assert result.returncode == 1
    assert "1 finished, 1 failed" in result.stdout and "FAILED" in result.stderr
    _, parents, trials = study_runs(f"sqlite:///{tmp_path / 'q.db'}", "tiny")
    failed = sorted((r for r in trials if r.data.params["reward"] == "faulty_oracle"), key=lambda r: r.data.tags["tvrl.attempt"])
    assert [(r.info.status, r.data.tags["tvrl.attempt"]) for r in failed] == [("FAILED", "1"), ("FAILED", "2")]
    assert [r.info.status for r in trials if r.data.params["reward"] == "toy_oracle"] == ["FINISHED"]
    assert parents[0].data.tags["tvrl.failed"] == "1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.xdist_group("ray")  # its `ray stop --force` would stop another test's cluster (test_ray_nodes.py)
def test_a_tiny_sweep_on_a_local_ray_cluster_logging_to_an_mlflow_server(tmp_path, tiny_policy_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"}
    ray, ray_port, mlflow_port = console_script("ray"), free_port(), free_port()
    server = subprocess.Popen(
        [console_script("mlflow"), "server", "--host", "127.0.0.1", "--port", str(mlflow_port), "--workers", "1",
         "--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}", "--artifacts-destination", str(tmp_path / "artifacts")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    started = subprocess.run([ray, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(ray_port),
                              "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats"],
                             env=env, capture_output=True, text=True, timeout=300)
    uri = f"http://127.0.0.1:{mlflow_port}"
    try:
        assert started.returncode == 0, started.stderr[-3000:]
        wait_for_port(mlflow_port)
        study = write_study(tmp_path, tiny_policy_path, axes="{'credit': ['window3']}", steps=1)
        result = sweep(tmp_path, study, "--executor", "ray", "--address", f"127.0.0.1:{ray_port}", "--no-tables", uri=uri)
        assert result.returncode == 0, result.stderr[-4000:]
        client, parents, trials = study_runs(uri, "tiny")
        assert len(parents) == 1 and len(trials) == 1 and trials[0].info.status == "FINISHED"
        assert client.list_artifacts(trials[0].info.run_id, "samples/final")
        assert not (tmp_path / "q.db").exists()  # everything went to the server
    finally:
        subprocess.run([ray, "stop", "--force"], env=env, capture_output=True, timeout=300)
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def wait_for_port(port: int, seconds: float = 120) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(1)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


def test_a_malformed_study_or_an_unknown_preset_fails_before_any_trial(tmp_path, tiny_policy_path):
    study = write_study(tmp_path, tiny_policy_path, axes="{'credit': ['uniform', 'windw3']}")
    result = sweep(tmp_path, study)
    assert result.returncode == 2
    assert f"{study}:" in result.stderr and "did you mean 'window3'" in result.stderr
    assert not (tmp_path / "out" / "runs").exists() and not (tmp_path / "q.db").exists()
    broken = tmp_path / "broken.gin"
    broken.write_text("sweeps.study.name = 'x'\nsweeps.study.axes = {'credit': ['uniform']\nsweeps.study.seeds = [0\n")
    result = sweep(tmp_path, broken)
    assert result.returncode == 2 and "broken.gin:" in result.stderr


def test_a_page_that_cannot_be_written_ends_a_finished_sweep_with_one_line_and_exit_2(tmp_path, tiny_policy_path,
                                                                                      monkeypatch, capsys):
    """The trials are done and the tables written; the last line says the page is not and how to write it."""
    from tests.sweeps.helpers import InProcess
    from tvrl_bench.cli.sweep import main
    from tvrl_bench.executors import base

    monkeypatch.setattr(base, "build_executor", lambda *args, **kwargs: InProcess())  # the trial in this process
    study = write_study(tmp_path, tiny_policy_path, axes="{'credit': ['uniform']}", steps=0,
                        extra=("training.trial.sample_videos = 0",))  # evaluation only: seconds
    (tmp_path / "out" / "reports" / "tiny" / "index.html").mkdir(parents=True)
    uri = f"sqlite:///{tmp_path / 'q.db'}"
    assert main([str(study), "--tracking-uri", uri, "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert "1 finished, 0 failed" in out and "table samplers:" in out
    line = err.strip().splitlines()[-1]
    assert line == (f"tvrl-sweep: error: study page not written: {tmp_path / 'out' / 'reports' / 'tiny' / 'index.html'}:"
                    " a folder stands where this file goes; move it away; every trial finished and the tables are "
                    f"written; once that is fixed, write it with: tvrl-report --study tiny --tracking-uri {uri} --out "
                    f"{tmp_path / 'out' / 'reports'}")
    assert "Traceback" not in err
