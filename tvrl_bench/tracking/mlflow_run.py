"""One trial's MLflow run, through an explicit client (no global active run, so resuming is exact).

Default tracking URI: `sqlite:///mlflow.db` in the working directory (artifacts beside it in mlflow_artifacts/).
Every attempt of a trial is its own run; a resumed attempt carries over the interrupted one's history
(`carry_over`). A run ends FINISHED, FAILED or KILLED.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any


# The experiment's kind as MLflow 3 records it (its header's type selector). MLflow 3.17's UI does not open an
# experiment by it: the GenAI / Model training switch does (`workflowType` in the URL, see sweeps/view.py).
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"


def experiment_id(client: Any, name: str, tracking_uri: str) -> str:
    """The id of experiment `name` in the store at `tracking_uri`, created if missing (tolerating a concurrent
    creator, with its artifacts beside an SQLite store: tracking/store.py), tagged as a model-training experiment."""
    from mlflow.exceptions import MlflowException

    from tvrl_bench.tracking.store import artifact_location

    found = client.get_experiment_by_name(name)
    if found is not None:
        if found.lifecycle_stage == "deleted":
            client.restore_experiment(found.experiment_id)
        if EXPERIMENT_KIND_TAG not in (found.tags or {}):
            client.set_experiment_tag(found.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
        return found.experiment_id
    try:
        return client.create_experiment(name, artifact_location=artifact_location(tracking_uri, name),
                                        tags={EXPERIMENT_KIND_TAG: EXPERIMENT_KIND})
    except MlflowException:
        found = client.get_experiment_by_name(name)
        if found is None:  # not a concurrent creator: the store failed (a full disk, a locked file)
            raise
        return found.experiment_id


def record_failed_run(
    tracking_uri: str, experiment: str, run_name: str, tags: dict[str, str], params: dict[str, Any], error: str
) -> str:
    """A FAILED run for a trial that failed before its own run existed (so reports list it); returns its id.

    The error's first line goes to tag `tvrl.error`."""
    from mlflow.entities import Param

    from tvrl_bench.tracking.store import client_for

    client = client_for(tracking_uri)
    exp = experiment_id(client, experiment, tracking_uri)
    run_id = client.create_run(exp, run_name=run_name, tags={**tags, "tvrl.error": error[:4000]}).info.run_id
    if params:
        client.log_batch(run_id, params=[Param(k, str(v)[:6000]) for k, v in params.items()])
    client.set_terminated(run_id, "FAILED")
    return run_id


class TrialTracker:
    """Logs one trial: params and tags once, metrics per step, artifacts, and the final status."""

    def __init__(self, tracking_uri: str, experiment: str, run_name: str, tags: dict[str, str] | None = None):
        from tvrl_bench.tracking.store import client_for

        self.client = client_for(tracking_uri)
        self.tracking_uri = tracking_uri
        exp = experiment_id(self.client, experiment, tracking_uri)
        self.run_id = self.client.create_run(exp, run_name=run_name, tags=dict(tags or {})).info.run_id

    def carry_over(self, previous_run_id: str, up_to_step: int, folders: tuple[str, ...] = ("samples/start", "credit")) -> None:
        """Continue an interrupted attempt: copy its metrics up to `up_to_step` and its media into this run.

        The previous run is marked KILLED if it is still RUNNING (its process died without a word).
        """
        from mlflow.entities import Metric
        from mlflow.exceptions import MlflowException

        try:
            previous = self.client.get_run(previous_run_id)
        except MlflowException:
            return  # logged to another tracking store; nothing to carry over
        self.end_previous(previous_run_id)
        self.set_tags({"tvrl.resumed_from": previous_run_id})
        for key in previous.data.metrics:
            history = self.client.get_metric_history(previous_run_id, key)
            kept = [Metric(key, m.value, m.timestamp, m.step) for m in history if m.step <= up_to_step]
            for i in range(0, len(kept), 200):
                self.client.log_batch(self.run_id, metrics=kept[i : i + 200])
        with tempfile.TemporaryDirectory() as tmp:
            for folder in folders:
                if self.client.list_artifacts(previous_run_id, folder):
                    local = self.client.download_artifacts(previous_run_id, folder, tmp)
                    self.client.log_artifacts(self.run_id, local, folder)

    def end_previous(self, previous_run_id: str) -> None:
        """Mark an interrupted attempt's run KILLED if it is still RUNNING (its process died without a word, or the
        store failed before it could say so)."""
        from mlflow.exceptions import MlflowException

        try:
            if self.client.get_run(previous_run_id).info.status == "RUNNING":
                self.client.set_terminated(previous_run_id, "KILLED")
        except MlflowException:
            pass  # logged to another tracking store

    def log_params(self, params: dict[str, Any]) -> None:
        from mlflow.entities import Param

        items = [Param(k, str(v)) for k, v in params.items()]
        for i in range(0, len(items), 100):
            self.client.log_batch(self.run_id, params=items[i : i + 100])

    def set_tags(self, tags: dict[str, str]) -> None:
        for key, value in tags.items():
            self.client.set_tag(self.run_id, key, str(value))

    def log_metrics(self, metrics: dict[str, float], step: int) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        items = [Metric(k, float(v), now, step) for k, v in metrics.items()]
        for i in range(0, len(items), 200):
            self.client.log_batch(self.run_id, metrics=items[i : i + 200])

    def log_artifact(self, local_path: str | Path, artifact_path: str | None = None) -> None:
        self.client.log_artifact(self.run_id, str(local_path), artifact_path)

    def log_artifacts(self, local_dir: str | Path, artifact_path: str | None = None) -> None:
        self.client.log_artifacts(self.run_id, str(local_dir), artifact_path)

    def log_text(self, text: str, artifact_file: str) -> None:
        self.client.log_text(self.run_id, text, artifact_file)

    def log_json(self, data: Any, artifact_file: str) -> None:
        self.client.log_text(self.run_id, json.dumps(data, indent=1), artifact_file)

    def finish(self, status: str = "FINISHED") -> None:
        self.client.set_terminated(self.run_id, status)
