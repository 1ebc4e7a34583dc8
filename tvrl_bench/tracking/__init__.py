"""MLflow tracking of trials: run names and params (RESULTS.md), metrics, videos, credit heatmaps."""

from tvrl_bench.tracking.mlflow_run import DEFAULT_TRACKING_URI, TrialTracker, experiment_id

__all__ = ["DEFAULT_TRACKING_URI", "TrialTracker", "experiment_id"]
