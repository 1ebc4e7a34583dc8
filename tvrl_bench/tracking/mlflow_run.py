"""One trial's MLflow run, through an explicit client (no global active run, so resuming is exact).

Default tracking URI: `sqlite:///mlflow.db` in the working directory. A run is created once and resumed by its
id after an interruption; it ends FINISHED, FAILED or KILLED.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"


def experiment_id(client: Any, name: str) -> str:
    """The id of experiment `name`, created if missing (tolerating a concurrent creator)."""
    from mlflow.exceptions import MlflowException

    found = client.get_experiment_by_name(name)
    if found is not None:
        if found.lifecycle_stage == "deleted":
            client.restore_experiment(found.experiment_id)
        return found.experiment_id
    try:
        return client.create_experiment(name)
    except MlflowException:
        return client.get_experiment_by_name(name).experiment_id


class TrialTracker:
    """Logs one trial: params and tags once, metrics per step, artifacts, and the final status."""

    def __init__(
        self,
        tracking_uri: str,
        experiment: str,
        run_name: str,
        tags: dict[str, str] | None = None,
        run_id: str | None = None,
    ):
        from mlflow.tracking import MlflowClient

        self.client = MlflowClient(tracking_uri)
        self.tracking_uri = tracking_uri
        if run_id is not None:
            self.run_id = run_id
            self.client.update_run(run_id, status="RUNNING")
            self.resumed = True
        else:
            exp = experiment_id(self.client, experiment)
            self.run_id = self.client.create_run(exp, run_name=run_name, tags=dict(tags or {})).info.run_id
            self.resumed = False

    def log_params(self, params: dict[str, Any]) -> None:
        from mlflow.entities import Param

        existing = self.client.get_run(self.run_id).data.params
        items = [Param(k, str(v)) for k, v in params.items() if k not in existing]
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
