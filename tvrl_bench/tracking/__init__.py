"""MLflow tracking of trials: run names and params (docs/report.md), metrics, videos, credit heatmaps."""

from tvrl_bench.tracking.mlflow_run import TrialTracker, experiment_id
from tvrl_bench.tracking.store import DEFAULT_TRACKING_URI

__all__ = ["DEFAULT_TRACKING_URI", "TrialTracker", "experiment_id"]
