"""A study's state in MLflow (real SQLite store): its parent run, its trials by key, orphans, failures, the end."""

from __future__ import annotations

import os

import pytest
from mlflow.tracking import MlflowClient

from tests.tracking.helpers import fresh_store
from tvrl_bench.sweeps.state import OWNER_TAG, StudyTracker, process_identity
from tvrl_bench.training.trial.lock import FolderLock, TrialBusy


@pytest.fixture
def uri(tmp_path_factory, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return fresh_store(tmp_path_factory, tmp_path)


def child(tracker: StudyTracker, key: str, attempt: int, status: str | None = None, parent: str | None = None) -> str:
    """A trial run as tvrl-train logs it: tagged with its key, attempt and parent; left RUNNING unless `status`."""
    tags = {"tvrl.trial_key": key, "tvrl.attempt": str(attempt), "tvrl.role": "trial", "tvrl.study": tracker.study,
            "mlflow.parentRunId": parent or tracker.parent_run_id}
    run_id = tracker.client.create_run(tracker.experiment_id, run_name=f"{key}-{attempt}", tags=tags).info.run_id
    if status:
        tracker.client.set_terminated(run_id, status)
    return run_id


def test_open_creates_the_study_experiment_and_a_running_parent_run(uri):
    tracker = StudyTracker.open(uri, "samplers", ["samplers", "credit"])
    client = MlflowClient(uri)
    parent = client.get_run(tracker.parent_run_id)
    assert parent.info.status == "RUNNING" and parent.info.run_name == "samplers"
    assert parent.data.tags["tvrl.role"] == "study" and parent.data.tags["tvrl.study"] == "samplers"
    assert parent.data.tags["tvrl.tables"] == "samplers,credit"
    assert client.get_experiment(parent.info.experiment_id).name == "samplers" == tracker.study
    assert tracker.experiment_id == parent.info.experiment_id


def test_reopening_a_study_reuses_its_parent_run_and_sets_it_running_again(uri):
    first = StudyTracker.open(uri, "s", [])
    first.finish({"finished": 1, "failed": 0})
    again = StudyTracker.open(uri, "s", [])
    assert again.parent_run_id == first.parent_run_id
    parent = MlflowClient(uri).get_run(again.parent_run_id)
    assert parent.info.status == "RUNNING" and "tvrl.tables" not in parent.data.tags
    other = StudyTracker.open(uri, "other", [])
    assert other.parent_run_id != first.parent_run_id


def test_a_second_sweep_of_a_study_is_refused_while_the_first_ones_process_lives(uri):
    import subprocess

    first = StudyTracker.open(uri, "s", [], out="/data/first")
    sweeper = subprocess.Popen(["sleep", "60"])  # stands in for the other sweep's process
    try:
        first.client.set_tag(first.parent_run_id, OWNER_TAG, process_identity(sweeper.pid))
        with pytest.raises(TrialBusy, match=rf"study s is being swept right now by process {sweeper.pid} into "
                                            r"/data/first on the store sqlite:.*run every trial twice.*kill"):
            StudyTracker.open(uri, "s", [], out="/data/second")
        # The same pid with another start time is a reused pid, not the sweep.
        host, pid, start = process_identity(sweeper.pid).rsplit(":", 2)
        first.client.set_tag(first.parent_run_id, OWNER_TAG, f"{host}:{pid}:{int(start) + 1}")
        StudyTracker.open(uri, "s", [], out="/data/second")
        first.client.set_tag(first.parent_run_id, OWNER_TAG, process_identity(sweeper.pid))
    finally:
        sweeper.kill()
        sweeper.wait()
    again = StudyTracker.open(uri, "s", [], out="/data/second")  # its process is gone: a killed sweep never blocks
    tags = MlflowClient(uri).get_run(again.parent_run_id).data.tags
    assert tags[OWNER_TAG] == process_identity(os.getpid()) and tags["tvrl.sweep_out"] == "/data/second"


def test_find_creates_nothing(uri, tmp_path):
    missing = tmp_path / "none.db"
    assert StudyTracker.find(f"sqlite:///{missing}", "s") is None
    assert not missing.exists()
    assert StudyTracker.find(uri, "s") is None  # no such experiment
    opened = StudyTracker.open(uri, "s", [])
    found = StudyTracker.find(uri, "s")
    assert found.parent_run_id == opened.parent_run_id and found.experiment_id == opened.experiment_id


def test_runs_groups_this_studys_trials_by_key(uri):
    tracker = StudyTracker.open(uri, "s", [])
    child(tracker, "k1", 1, "FAILED")
    child(tracker, "k1", 2, "FINISHED")
    child(tracker, "k2", 1, "KILLED")
    child(tracker, "k3", 1, parent="someone-else")  # same experiment, another parent
    runs = tracker.runs()
    assert runs.parent_run_id == tracker.parent_run_id
    assert sorted(runs.by_key) == ["k1", "k2"]
    assert runs.finished("k1") and not runs.finished("k2") and not runs.finished("k3")
    assert (runs.attempts("k1"), runs.attempts("k2"), runs.attempts("k3")) == (2, 1, 0)
    assert tracker.has_attempt("k1", 2) and not tracker.has_attempt("k1", 3) and not tracker.has_attempt("k3", 1)


def test_mark_orphans_kills_running_trials_whose_folder_no_live_process_holds(uri, tmp_path):
    tracker = StudyTracker.open(uri, "s", [])
    orphan = child(tracker, "k1", 1)
    finished = child(tracker, "k1", 2, "FINISHED")
    live = child(tracker, "k2", 1)
    folders = tmp_path / "runs" / "s"
    lock = FolderLock(folders / "k2").acquire()  # a live trial process owns k2
    try:
        assert tracker.mark_orphans(folders) == 1
    finally:
        lock.release()
    client = MlflowClient(uri)
    assert client.get_run(orphan).info.status == "KILLED"
    assert client.get_run(finished).info.status == "FINISHED"
    assert client.get_run(live).info.status == "RUNNING"
    assert tracker.mark_orphans(folders) == 1  # k2's process has gone
    assert client.get_run(live).info.status == "KILLED"
    assert tracker.mark_orphans() == 0


def test_record_failure_leaves_a_failed_child_run(uri):
    tracker = StudyTracker.open(uri, "s", [])
    run_id = tracker.record_failure(uri, "k9", 2, "window3-s0", {"credit": "window3", "seed": 0}, "exit code 1")
    run = MlflowClient(uri).get_run(run_id)
    assert run.info.status == "FAILED" and run.info.run_name == "window3-s0"
    assert run.info.experiment_id == tracker.experiment_id
    assert run.data.tags["mlflow.parentRunId"] == tracker.parent_run_id
    assert {k: run.data.tags[k] for k in ("tvrl.trial_key", "tvrl.attempt", "tvrl.role", "tvrl.study", "tvrl.error")} == {
        "tvrl.trial_key": "k9", "tvrl.attempt": "2", "tvrl.role": "trial", "tvrl.study": "s", "tvrl.error": "exit code 1"}
    assert run.data.params == {"credit": "window3", "seed": "0"}
    assert tracker.has_attempt("k9", 2) and tracker.runs().attempts("k9") == 1


@pytest.mark.parametrize("counts, status, expected", [
    ({"finished": 3, "failed": 0}, None, "FINISHED"),
    ({"finished": 2, "failed": 1}, None, "FAILED"),
    ({"finished": 1, "failed": 0, "stopped": 2}, "KILLED", "KILLED"),
])
def test_finish_tags_the_counts_and_ends_the_parent(uri, counts, status, expected):
    tracker = StudyTracker.open(uri, "s", [])
    tracker.finish(counts, status=status)
    parent = MlflowClient(uri).get_run(tracker.parent_run_id)
    assert parent.info.status == expected
    assert {k: parent.data.tags[f"tvrl.{k}"] for k in counts} == {k: str(v) for k, v in counts.items()}
