"""The study's saved MLflow view and the links tvrl-sweep prints (the browser test is test_mlflow_ui.py)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

from mlflow.tracking import MlflowClient

from tvrl_bench.sweeps.state import StudyTracker
from tvrl_bench.sweeps.view import VIEW_KEY, VIEW_NAME, study_links


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(urlsplit(url).fragment).query)


def test_links_for_a_database_name_the_command_that_serves_them():
    links = study_links("sqlite:///runs dir/mlflow.db", "7")
    assert links.serve == "mlflow ui --backend-store-uri 'sqlite:///runs dir/mlflow.db'"
    assert links.runs.startswith("http://127.0.0.1:5000/#/experiments/7/runs?")
    assert _query(links.runs) == {"workflowType": ["machine_learning"], "viewStateShareKey": [VIEW_KEY]}
    assert _query(links.charts) == {**_query(links.runs), "compareRunsMode": ["CHART"]}
    assert links.lines()[0] == "MLflow UI (after `mlflow ui --backend-store-uri 'sqlite:///runs dir/mlflow.db'`):"


def test_links_on_a_tracking_server_are_its_own_address():
    links = study_links("http://mlflow.lab:5000/", "3")
    assert links.serve is None
    assert links.runs.startswith("http://mlflow.lab:5000/#/experiments/3/runs?")
    assert links.lines()[0] == "MLflow UI (on the tracking server):"
    assert study_links("databricks", "3") is None


def test_opening_a_study_saves_its_view_once(tmp_path):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    tracker = StudyTracker.open(uri, "samplers", ["samplers"], ["sampler", "credit"])
    StudyTracker.open(uri, "samplers", ["samplers"], ["sampler", "credit"])  # a resumed sweep rewrites it
    tags = MlflowClient(uri).get_experiment(tracker.experiment_id).tags
    views = [k for k in tags if k.startswith("mlflow.sharedViewState.")]
    assert views == [f"mlflow.sharedViewState.{VIEW_KEY}"]
    envelope = json.loads(tags[views[0]])
    assert envelope["name"] == VIEW_NAME and isinstance(envelope["createdAt"], int)
    state = json.loads(envelope["state"])
    assert state["selectedColumns"] == [
        "params.`method`", "params.`sampler`", "params.`credit`", "params.`seed`",
        "metrics.`eval/overall`", "metrics.`eval/critic_reward`", "metrics.`train/reward_mean`",
    ]
    assert state["orderByKey"] == "metrics.`eval/overall`" and state["orderByAsc"] is False
    assert state["runsHiddenMode"] == "SHOW_ALL"
