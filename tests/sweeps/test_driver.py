"""The sweep driver with test executors: a real tiny trial run in-process, and scripted exit codes for retries,
resume, failures and stops; what it records in a real SQLite MLflow store."""

from __future__ import annotations

import os
import signal
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.sweeps.helpers import InProcess, options, write_study
from tests.tracking.helpers import fresh_store
from tvrl_bench.executors.base import CANCELLED, NOT_STARTED, Executor, TrialCommand
from tvrl_bench.sweeps.driver import SWEEP_LOCK, last_error_line, plan, run_sweep
from tvrl_bench.tracking.mlflow_run import TrialTracker
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.trial.lock import FolderLock, TrialBusy

pytestmark = pytest.mark.integration


@pytest.fixture
def uri(tmp_path_factory, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return fresh_store(tmp_path_factory, tmp_path)


def flag(command: TrialCommand, name: str) -> str:
    args = list(command.args)
    return args[args.index(name) + 1]


def credit_of(command: TrialCommand) -> str:
    return flag(command, "--label").split("=", 1)[1]


def attempt_of(command: TrialCommand) -> int:
    return int(flag(command, "--attempt"))


def key_of(command: TrialCommand) -> str:
    return Path(command.log_path).name.split(".attempt")[0]


def log_run(command: TrialCommand, status: str) -> str:
    """A trial run as tvrl-train would log it for this command (RUNNING stays RUNNING, as after a SIGKILL)."""
    tags = {"tvrl.trial_key": key_of(command), "tvrl.attempt": flag(command, "--attempt"), "tvrl.role": "trial",
            "tvrl.study": flag(command, "--study"), "mlflow.parentRunId": flag(command, "--parent-run-id")}
    tracker = TrialTracker(flag(command, "--tracking-uri"), flag(command, "--experiment"), credit_of(command), tags)
    if status != "RUNNING":
        tracker.finish(status)
    return tracker.run_id


class Scripted(Executor):
    """Answers each command at once with the exit code scripted for (credit label, attempt), 0 otherwise; `act`
    does what the trial process would have done (write its log, log its run) before it exits."""

    def __init__(self, codes: dict[tuple[str, int], int] | None = None, act=None):
        self.codes = codes or {}
        self.act = act
        self.commands: list[TrialCommand] = []
        self.shutdowns = 0

    def submit(self, command: TrialCommand) -> Future:
        self.commands.append(command)
        if self.act:
            self.act(command)
        future: Future = Future()
        future.set_result(self.codes.get((credit_of(command), attempt_of(command)), 0))
        return future

    def shutdown(self) -> None:
        self.shutdowns += 1



def study_runs(uri: str, study: str = "tiny"):
    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name(study).experiment_id], max_results=1000)
    parents = [r for r in runs if r.data.tags.get("tvrl.role") == "study"]
    return parents, [r for r in runs if r.data.tags.get("tvrl.role") == "trial"]


def test_a_real_trial_runs_through_the_executor_is_recorded_and_is_skipped_when_rerun(uri, tmp_path, tiny_policy_path):
    study = write_study(tmp_path, tiny_policy_path, axes="{'credit': ['uniform']}", steps=1,
                        extra=("training.trial.sample_videos = 1",))
    executor = InProcess()
    summary = run_sweep(str(study), lambda: executor, options(uri, tmp_path))
    assert executor.codes == [0]
    assert len(summary.finished) == 1 and not summary.failed and not summary.skipped and summary.signal is None
    spec = summary.finished[0]

    (parent,), (trial,) = study_runs(uri)
    assert parent.info.status == "FINISHED" and parent.info.run_name == "tiny"
    assert parent.data.tags["tvrl.finished"] == "1" and parent.data.tags["tvrl.failed"] == "0"
    assert trial.info.status == "FINISHED" and trial.info.run_name == "uniform-s0"
    assert trial.data.tags["mlflow.parentRunId"] == parent.info.run_id
    assert trial.data.tags["tvrl.trial_key"] == spec.key and trial.data.tags["tvrl.attempt"] == "1"
    assert (trial.data.params["credit"], trial.data.params["method"], trial.data.params["seed"]) == ("uniform", "GRPO", "0")
    assert "eval/overall" in trial.data.metrics
    assert CheckpointDir(tmp_path / "out" / "runs" / "tiny" / spec.key).info().finished

    again = Scripted()
    rerun = run_sweep(str(study), lambda: again, options(uri, tmp_path))
    assert again.commands == [] and [s.key for s in rerun.skipped] == [spec.key] and not rerun.finished
    assert "0 finished, 0 failed, 1 skipped" in rerun.line()
    parents, trials = study_runs(uri)
    assert len(parents) == 1 and parents[0].info.status == "FINISHED" and len(trials) == 1


def test_each_command_carries_the_study_its_parent_run_the_attempt_and_the_labels(uri, tmp_path):
    study = write_study(tmp_path, "/nowhere")
    executor = Scripted()
    summary = run_sweep(str(study), lambda: executor, options(uri, tmp_path))
    (parent,), trials = study_runs(uri)
    assert trials == []  # the scripted trials log nothing
    assert parent.info.status == "FINISHED" and parent.data.tags["tvrl.finished"] == "2"
    assert executor.shutdowns == 1
    assert [credit_of(c) for c in executor.commands] == ["uniform", "window3"]
    # trials finish in any order: pair each command with its trial by key
    specs = {s.key: s for s in summary.finished}
    assert sorted(specs) == sorted(key_of(c) for c in executor.commands)
    out = tmp_path / "out"
    for command in executor.commands:
        spec = specs[key_of(command)]
        args = list(command.args)
        assert args[: len(spec.files)] == list(spec.files)
        assert args[len(spec.files)] == "--gin_bindings"
        assert args[len(spec.files) + 1: len(spec.files) + 1 + len(spec.bindings)] == list(spec.bindings)
        expected = {"--tracking-uri": uri, "--experiment": "tiny", "--study": "tiny",
                    "--parent-run-id": parent.info.run_id, "--attempt": "1", "--out": str(out / "runs"),
                    "--label": f"credit={spec.labels['credit']}"}
        assert {name: flag(command, name) for name in expected} == expected
        assert command.log_path == str(out / "logs" / "tiny" / f"{spec.key}.attempt1.log")
        assert command.num_gpus == 0


def test_a_failed_trial_is_retried_as_its_next_attempt(uri, tmp_path):
    study = write_study(tmp_path, "/nowhere")
    executor = Scripted({("window3", 1): 1})
    summary = run_sweep(str(study), lambda: executor, options(uri, tmp_path, max_attempts=2))
    assert [(credit_of(c), attempt_of(c)) for c in executor.commands] == [("uniform", 1), ("window3", 1), ("window3", 2)]
    assert len(summary.finished) == 2 and not summary.failed
    (parent,), trials = study_runs(uri)
    assert trials == [] and parent.info.status == "FINISHED"


def test_a_trial_failing_every_attempt_gets_a_failed_run_with_its_error_and_the_others_go_on(uri, tmp_path):
    study = write_study(tmp_path, "/nowhere")

    def act(command):
        if credit_of(command) == "window3":
            Path(command.log_path).write_text(f"Traceback ...\ntvrl-train: trial failed: boom {attempt_of(command)}\n")

    executor = Scripted({("window3", 1): 1, ("window3", 2): 1}, act)
    summary = run_sweep(str(study), lambda: executor, options(uri, tmp_path, max_attempts=2))
    assert [(credit_of(c), attempt_of(c)) for c in executor.commands] == [("uniform", 1), ("window3", 1), ("window3", 2)]
    assert [s.labels["credit"] for s in summary.failed] == ["window3"]
    assert [s.labels["credit"] for s in summary.finished] == ["uniform"]
    key = summary.failed[0].key
    assert summary.errors == {key: "trial failed: boom 2"}
    assert "1 finished, 1 failed, 0 skipped" in summary.line()
    (parent,), (trial,) = study_runs(uri)
    assert parent.info.status == "FAILED" and parent.data.tags["tvrl.failed"] == "1"
    assert parent.data.tags["tvrl.finished"] == "1"
    assert trial.info.status == "FAILED" and trial.info.run_name == "window3-s0"
    assert trial.data.tags["tvrl.trial_key"] == key and trial.data.tags["tvrl.attempt"] == "2"
    assert trial.data.tags["mlflow.parentRunId"] == parent.info.run_id
    assert trial.data.tags["tvrl.error"] == "trial failed: boom 2"
    assert trial.data.params == {"credit": "window3", "seed": "0", "method": "TVRL"}


def test_a_usage_error_is_not_retried(uri, tmp_path):
    study = write_study(tmp_path, "/nowhere", axes="{'credit': ['uniform']}")
    executor = Scripted({("uniform", 1): 2})
    summary = run_sweep(str(study), lambda: executor, options(uri, tmp_path, max_attempts=3))
    assert len(executor.commands) == 1 and len(summary.failed) == 1
    assert summary.errors[summary.failed[0].key] == "the trial process exited with code 2"  # it wrote no log
    (_,), (trial,) = study_runs(uri)
    assert trial.info.status == "FAILED" and trial.data.params["method"] == "GRPO"


def test_a_failed_run_the_trial_logged_itself_is_not_recorded_twice(uri, tmp_path):
    study = write_study(tmp_path, "/nowhere", axes="{'credit': ['window3']}")
    executor = Scripted({("window3", 1): 1}, act=lambda command: log_run(command, "FAILED"))
    summary = run_sweep(str(study), lambda: executor, options(uri, tmp_path, max_attempts=1))
    assert len(summary.failed) == 1
    _, trials = study_runs(uri)
    assert [(t.info.status, t.data.tags["tvrl.attempt"]) for t in trials] == [("FAILED", "1")]
    assert "tvrl.error" not in trials[0].data.tags  # the trial's own run, not a second one from the driver


def test_a_trial_cancelled_from_outside_is_not_retried_and_its_killed_run_becomes_failed_with_the_reason(uri,
                                                                                                        tmp_path):
    study = write_study(tmp_path, "/nowhere", axes="{'credit': ['window3']}")

    def act(command):  # the trial checkpointed and marked its run KILLED; the executor said what happened
        log_run(command, "KILLED")
        Path(command.log_path).write_text("tvrl-train: stopped by a signal\ntvrl-sweep: Slurm job 7 was cancelled\n")

    executor = Scripted({("window3", 1): CANCELLED}, act)
    summary = run_sweep(str(study), lambda: executor, options(uri, tmp_path, max_attempts=3))
    assert len(executor.commands) == 1 and len(summary.failed) == 1
    _, (trial,) = study_runs(uri)
    assert trial.info.status == "FAILED" and trial.data.tags["tvrl.error"] == "Slurm job 7 was cancelled"


def test_a_rerun_skips_finished_trials_kills_orphans_and_continues_the_attempt_count(uri, tmp_path):
    study = write_study(tmp_path, "/nowhere")
    orphans: list[str] = []

    def first_act(command):
        if credit_of(command) == "uniform":
            log_run(command, "FINISHED")
        else:
            orphans.append(log_run(command, "RUNNING"))  # its process was killed before it could mark the run

    first = run_sweep(str(study), lambda: Scripted({("window3", 1): 2}, first_act), options(uri, tmp_path))
    assert [s.labels["credit"] for s in first.failed] == ["window3"]
    (parent,), _ = study_runs(uri)
    assert parent.info.status == "FAILED"

    executor = Scripted(act=lambda command: log_run(command, "FINISHED"))
    second = run_sweep(str(study), lambda: executor, options(uri, tmp_path))
    assert [(credit_of(c), attempt_of(c)) for c in executor.commands] == [("window3", 2)]
    assert [s.labels["credit"] for s in second.skipped] == ["uniform"]
    assert [s.labels["credit"] for s in second.finished] == ["window3"]
    client = MlflowClient(uri)
    assert client.get_run(orphans[0]).info.status == "KILLED"
    parents, trials = study_runs(uri)
    assert [p.info.run_id for p in parents] == [parent.info.run_id] and parents[0].info.status == "FINISHED"
    assert parents[0].data.tags["tvrl.finished"] == "2" and parents[0].data.tags["tvrl.failed"] == "0"
    assert sorted((t.info.run_name, t.data.tags["tvrl.attempt"], t.info.status) for t in trials) == [
        ("uniform", "1", "FINISHED"), ("window3", "1", "KILLED"), ("window3", "2", "FINISHED")]


class Stoppable(Executor):
    """One worker slot. The first trial sends this process SIGTERM (as `kill` of the sweep would) and exits 130
    once the driver forwards the stop (`interrupt`); a trial that has not started by then never starts."""

    def __init__(self):
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.stopping = threading.Event()
        self.started: list[str] = []

    def submit(self, command: TrialCommand) -> Future:
        return self.pool.submit(self._run, command)

    def _run(self, command: TrialCommand) -> int:
        if self.stopping.is_set():
            return NOT_STARTED
        self.started.append(credit_of(command))
        os.kill(os.getpid(), signal.SIGTERM)
        return 130 if self.stopping.wait(timeout=30) else 0

    def interrupt(self) -> None:
        self.stopping.set()

    def shutdown(self) -> None:
        self.interrupt()
        self.pool.shutdown(wait=True, cancel_futures=True)


def test_sigterm_is_forwarded_to_the_trials_and_the_parent_run_is_killed(uri, tmp_path):
    study = write_study(tmp_path, "/nowhere")
    received: list[int] = []

    def ours(signum, frame):
        received.append(signum)

    previous = signal.signal(signal.SIGTERM, ours)
    try:
        executor = Stoppable()
        summary = run_sweep(str(study), lambda: executor, options(uri, tmp_path))
        assert received == []  # the driver's handler took it
        assert signal.getsignal(signal.SIGTERM) is ours  # and put ours back
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert summary.signal == signal.SIGTERM and executor.started == ["uniform"]
    assert [s.labels["credit"] for s in summary.stopped] == ["uniform"]
    assert [s.labels["credit"] for s in summary.not_started] == ["window3"]
    assert not summary.failed and not summary.finished
    assert "stopped by SIGTERM" in summary.line() and "rerun the same command" in summary.line()
    (parent,), trials = study_runs(uri)
    assert parent.info.status == "KILLED" and parent.data.tags["tvrl.stopped"] == "2"
    assert trials == []  # no FAILED run for a stopped trial


def test_a_trial_still_running_from_an_earlier_sweep_blocks_the_sweep(uri, tmp_path):
    study = write_study(tmp_path, "/nowhere")
    opts = options(uri, tmp_path)
    planned = plan(str(study), opts)
    busy = planned[1][1]
    lock = FolderLock(tmp_path / "out" / "runs" / "tiny" / busy.key).acquire()
    built: list[Executor] = []
    try:
        with pytest.raises(TrialBusy) as caught:
            run_sweep(str(study), lambda: built.append(Scripted()) or built[-1], opts, planned=planned)
    finally:
        lock.release()
    message = str(caught.value)
    assert busy.key in message and "still running from an earlier sweep" in message and str(os.getpid()) in message
    assert [e.commands for e in built] == [[]] and built[0].shutdowns == 1  # built (it names jobs it takes over),
    # asked, shut down: nothing was started
    assert MlflowClient(uri).get_experiment_by_name("tiny") is None


def test_one_sweep_at_a_time_owns_a_study(uri, tmp_path):
    study = write_study(tmp_path, "/nowhere")
    with (FolderLock(tmp_path / "out" / "runs" / "tiny", SWEEP_LOCK, what="study tiny"),
          pytest.raises(TrialBusy, match="study tiny folder")):
        run_sweep(str(study), Scripted, options(uri, tmp_path))


def test_an_executor_failure_fails_the_parent_run_and_shuts_the_executor_down(uri, tmp_path):
    study = write_study(tmp_path, "/nowhere")

    class Broken(Scripted):
        def submit(self, command):
            raise RuntimeError("no workers left")

    executor = Broken()
    with pytest.raises(RuntimeError, match="no workers left"):
        run_sweep(str(study), lambda: executor, options(uri, tmp_path))
    assert executor.shutdowns >= 1
    (parent,), _ = study_runs(uri)
    assert parent.info.status == "FAILED"


def test_a_dry_run_prints_the_plan_and_creates_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    study = write_study(tmp_path, "/nowhere")
    database = tmp_path / "none.db"
    summary = run_sweep(str(study), Scripted, options(f"sqlite:///{database}", tmp_path, dry_run=True))
    printed = capsys.readouterr().out
    _, trials = plan(str(study), options(f"sqlite:///{database}", tmp_path))
    assert printed.startswith("study tiny (2 trials; profile components/profiles/toy_v1.gin)")
    for spec in trials:
        assert f"{spec.key}  pending" in printed and spec.title in printed
    assert summary.finished == [] and not database.exists() and not (tmp_path / "out").exists()


def test_last_error_line_is_the_trials_own_last_message(tmp_path):
    log = tmp_path / "k.attempt1.log"
    assert last_error_line(log) is None  # no log at all
    log.write_text("INFO step 1\ntvrl-train: first problem\nTraceback\n  ...\ntvrl-train: trial failed: nan reward\n")
    assert last_error_line(log) == "trial failed: nan reward"
    log.write_text("INFO step 1\nKilled\n")
    assert last_error_line(log) is None
    log.write_text("tvrl-train: stopped by SIGTERM\ntvrl-sweep: Slurm job 7 hit its time limit\n")
    assert last_error_line(log) == "Slurm job 7 hit its time limit"  # what the executor saw, after the trial
