"""One trial's MLflow run on a real SQLite store: creation, params, metrics, artifacts, carry-over, status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.tracking.helpers import fresh_store
from tvrl_bench.tracking.mlflow_run import (EXPERIMENT_KIND, EXPERIMENT_KIND_TAG, TrialTracker, experiment_id,
                                            record_failed_run)


@pytest.fixture
def uri(tmp_path_factory, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # were artifacts to go to ./mlruns, they would land in tmp_path
    return fresh_store(tmp_path_factory, tmp_path)


def history(client, run_id: str, key: str) -> list[tuple[int, float]]:
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))


def test_a_tracker_creates_a_running_run_with_its_name_and_tags(uri):
    tracker = TrialTracker(uri, "trials", "sage-toy_oracle-window3-s0", {"tvrl.trial_key": "abc", "tvrl.attempt": "1"})
    client = MlflowClient(uri)
    run = client.get_run(tracker.run_id)
    assert run.info.status == "RUNNING" and run.info.run_name == "sage-toy_oracle-window3-s0"
    assert run.data.tags["tvrl.trial_key"] == "abc" and run.data.tags["tvrl.attempt"] == "1"
    experiment = client.get_experiment(run.info.experiment_id)
    assert experiment.name == "trials" and experiment.tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND
    second = TrialTracker(uri, "trials", "again")
    assert client.get_run(second.run_id).info.experiment_id == run.info.experiment_id  # the same experiment


def test_params_metrics_and_status_are_logged(uri):
    tracker = TrialTracker(uri, "trials", "t")
    params = {f"p{i:03d}": i for i in range(250)}  # more than one batch
    tracker.log_params({**params, "credit": "window3", "seed": 0})
    for step in (1, 2, 3):
        tracker.log_metrics({"train/reward_mean": 0.1 * step, "train/loss": float(step)}, step=step)
    tracker.set_tags({"tvrl.note": 5})
    tracker.finish("FAILED")
    client = MlflowClient(uri)
    run = client.get_run(tracker.run_id)
    assert run.info.status == "FAILED"
    assert run.data.params["credit"] == "window3" and run.data.params["seed"] == "0" and run.data.params["p249"] == "249"
    assert len(run.data.params) == 252
    assert history(client, tracker.run_id, "train/loss") == [(1, 1.0), (2, 2.0), (3, 3.0)]
    assert run.data.tags["tvrl.note"] == "5"


def test_many_metrics_at_one_step_are_all_logged(uri):
    tracker = TrialTracker(uri, "trials", "t")
    tracker.log_metrics({f"m{i}": float(i) for i in range(450)}, step=7)  # more than one batch of 200
    run = MlflowClient(uri).get_run(tracker.run_id)
    assert len(run.data.metrics) == 450 and run.data.metrics["m449"] == 449.0


def test_finish_defaults_to_finished(uri):
    tracker = TrialTracker(uri, "trials", "t")
    tracker.finish()
    assert MlflowClient(uri).get_run(tracker.run_id).info.status == "FINISHED"


def test_artifacts_text_and_json_are_stored_under_their_paths(uri, tmp_path):
    tracker = TrialTracker(uri, "trials", "t")
    image = tmp_path / "step_000001.png"
    image.write_bytes(b"\x89PNG not really")
    folder = tmp_path / "videos"
    folder.mkdir()
    (folder / "sample_000.mp4").write_bytes(b"mp4")
    tracker.log_artifact(image, "credit")
    tracker.log_artifacts(folder, "samples/start")
    tracker.log_text("training.trial.steps = 2\n", "config/config.gin")
    tracker.log_json([{"index": 0, "prompt": "a red circle"}], "samples/start/index.json")
    client = MlflowClient(uri)
    assert [a.path for a in client.list_artifacts(tracker.run_id, "credit")] == ["credit/step_000001.png"]
    assert {a.path for a in client.list_artifacts(tracker.run_id, "samples/start")} == {
        "samples/start/sample_000.mp4", "samples/start/index.json"}
    local = client.download_artifacts(tracker.run_id, "", str(tmp_path / "down"))
    assert (Path(local) / "config" / "config.gin").read_text() == "training.trial.steps = 2\n"
    index = json.loads((Path(local) / "samples" / "start" / "index.json").read_text())
    assert index == [{"index": 0, "prompt": "a red circle"}]
    assert (Path(local) / "credit" / "step_000001.png").read_bytes() == b"\x89PNG not really"


def interrupted_run(uri, tmp_path, status: str | None = None) -> str:
    """An earlier attempt with metrics at steps 1..5 and media in three folders; left RUNNING unless `status`."""
    previous = TrialTracker(uri, "trials", "attempt-1")
    for step in range(1, 6):
        previous.log_metrics({"train/reward_mean": float(step), "eval/overall": 10.0 * step}, step=step)
    for folder in ("credit", "samples/start", "samples/final"):
        local = tmp_path / "media" / folder
        local.mkdir(parents=True)
        (local / "file.bin").write_bytes(folder.encode())
        previous.log_artifacts(local, folder)
    if status:
        previous.finish(status)
    return previous.run_id


def test_carry_over_copies_history_up_to_the_checkpoint_and_the_start_media(uri, tmp_path):
    previous = interrupted_run(uri, tmp_path)
    tracker = TrialTracker(uri, "trials", "attempt-2")
    tracker.carry_over(previous, up_to_step=3)
    client = MlflowClient(uri)
    assert client.get_run(previous).info.status == "KILLED"  # its process died without a word
    run = client.get_run(tracker.run_id)
    assert run.data.tags["tvrl.resumed_from"] == previous
    assert history(client, tracker.run_id, "train/reward_mean") == [(1, 1.0), (2, 2.0), (3, 3.0)]
    assert history(client, tracker.run_id, "eval/overall") == [(1, 10.0), (2, 20.0), (3, 30.0)]
    assert [a.path for a in client.list_artifacts(tracker.run_id, "credit")] == ["credit/file.bin"]
    assert [a.path for a in client.list_artifacts(tracker.run_id, "samples/start")] == ["samples/start/file.bin"]
    assert client.list_artifacts(tracker.run_id, "samples/final") == []  # the final samples are made anew
    local = client.download_artifacts(tracker.run_id, "credit/file.bin", str(tmp_path / "down"))
    assert Path(local).read_bytes() == b"credit"


def test_carry_over_leaves_a_finished_status_alone(uri, tmp_path):
    previous = interrupted_run(uri, tmp_path, status="FAILED")
    tracker = TrialTracker(uri, "trials", "attempt-2")
    tracker.carry_over(previous, up_to_step=0)
    client = MlflowClient(uri)
    assert client.get_run(previous).info.status == "FAILED"
    assert client.get_run(tracker.run_id).data.metrics == {}  # nothing at or before step 0


def test_carry_over_from_a_run_of_another_store_does_nothing(uri):
    tracker = TrialTracker(uri, "trials", "t")
    tracker.carry_over("0123456789abcdef0123456789abcdef", up_to_step=5)
    run = MlflowClient(uri).get_run(tracker.run_id)
    assert "tvrl.resumed_from" not in run.data.tags and run.info.status == "RUNNING"


def test_record_failed_run_leaves_a_failed_run_with_the_error_and_params(uri):
    tags = {"tvrl.trial_key": "k1", "tvrl.attempt": "2", "tvrl.role": "trial"}
    run_id = record_failed_run(uri, "study", "window3-s0", tags, {"credit": "window3", "seed": 0, "long": "z" * 7000},
                               "ConfigError: nothing is bound to REWARD\n" + "e" * 5000)
    client = MlflowClient(uri)
    run = client.get_run(run_id)
    assert run.info.status == "FAILED" and run.info.run_name == "window3-s0"
    assert client.get_experiment(run.info.experiment_id).name == "study"
    assert run.data.tags["tvrl.trial_key"] == "k1" and run.data.tags["tvrl.attempt"] == "2"
    assert run.data.tags["tvrl.error"].startswith("ConfigError: nothing is bound to REWARD")
    assert len(run.data.tags["tvrl.error"]) == 4000
    assert run.data.params["credit"] == "window3" and run.data.params["seed"] == "0"
    assert run.data.params["long"] == "z" * 6000


def test_record_failed_run_without_params(uri):
    run_id = record_failed_run(uri, "study", "x-s0", {}, {}, "boom")
    run = MlflowClient(uri).get_run(run_id)
    assert run.info.status == "FAILED" and run.data.params == {} and run.data.tags["tvrl.error"] == "boom"


def test_experiment_id_restores_a_deleted_experiment(uri):
    client = MlflowClient(uri)
    first = experiment_id(client, "study", uri)
    client.delete_experiment(first)
    assert experiment_id(client, "study", uri) == first
    assert client.get_experiment(first).lifecycle_stage == "active"


def test_artifacts_live_beside_the_store_never_in_the_working_directory(uri, tmp_path):
    tracker = TrialTracker(uri, "my study/1", "t")
    (tmp_path / "note.txt").write_text("x")
    tracker.client.log_artifact(tracker.run_id, str(tmp_path / "note.txt"))
    stored = tmp_path / "m_artifacts" / "my_study_1" / tracker.run_id / "artifacts" / "note.txt"
    assert stored.read_text() == "x"
    assert not (tmp_path / "mlruns").exists()


def test_a_store_that_fails_while_creating_an_experiment_raises_its_own_error(uri, monkeypatch):
    from mlflow.exceptions import MlflowException

    client = MlflowClient(uri)

    def full_disk(*args, **kwargs):
        raise MlflowException("(sqlite3.OperationalError) database or disk is full")

    monkeypatch.setattr(client, "create_experiment", full_disk)
    with pytest.raises(MlflowException, match="disk is full"):  # not AttributeError on a missing experiment
        experiment_id(client, "study", uri)
