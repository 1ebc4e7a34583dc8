"""An MLflow experiment's runs as one pandas frame: direct SQL on a SQL tracking store, else `search_runs`.

The frame has one row per run with the columns RUN_COLUMNS, `params.<name>` (strings), `metrics.<name>` (latest
value, float), `tags.<name>` and NAN_METRICS: the sorted names of the metrics whose latest value is NaN (a diverged
run logged them; `metrics.<name>` alone reads NaN for a metric never logged too). Both ways of reading give the
same frame.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import pandas as pd

log = logging.getLogger(__name__)

# Columns of a runs frame besides params.<name>, metrics.<name> and tags.<name>.
RUN_COLUMNS = ("run_id", "run_name", "status", "start_time", "end_time")
NAN_METRICS = "nan_metrics"


def logged_nan(runs: pd.DataFrame, metric: str) -> pd.Series:
    """Per run of a runs frame: whether its latest `metric` is a NaN it logged (False where it logged none)."""
    if NAN_METRICS not in runs.columns:
        return pd.Series(False, index=runs.index)
    return runs[NAN_METRICS].map(lambda names: isinstance(names, tuple) and metric in names)


def search_all_runs(client: Any, experiment_id: str) -> list[Any]:
    """Every run of the experiment (`mlflow.entities.Run`), through paged `client.search_runs` calls."""
    runs: list[Any] = []
    token = None
    while True:
        page = client.search_runs([experiment_id], max_results=50_000, page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            return runs


_SQL = {
    "runs": ("SELECT r.run_uuid, r.name, r.status, r.start_time, r.end_time FROM runs r",
             ["run_id", "run_name", "status", "start_time", "end_time"]),
    "params": ("SELECT r.run_uuid, x.key, x.value FROM params x JOIN runs r ON x.run_uuid = r.run_uuid",
               ["run_id", "key", "value"]),
    "metrics": ("SELECT r.run_uuid, x.key, x.value, x.is_nan FROM latest_metrics x "
                "JOIN runs r ON x.run_uuid = r.run_uuid", ["run_id", "key", "value", "is_nan"]),
    "tags": ("SELECT r.run_uuid, x.key, x.value FROM tags x JOIN runs r ON x.run_uuid = r.run_uuid",
             ["run_id", "key", "value"]),
}


def sql_runs_frame(client: Any, experiment_id: str) -> pd.DataFrame | None:
    """The runs frame read directly from a SQL tracking store, or None when the store is not one (or fails); a
    locked store's error is raised, for the caller to wait it out."""
    try:
        from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

        store = client._tracking_client.store
        if not isinstance(store, SqlAlchemyStore):
            return None
        # an integer literal (no bound parameter), so the plain DB-API cursor works with every driver's paramstyle
        where = f" WHERE r.experiment_id = {int(experiment_id)} AND r.lifecycle_stage = 'active'"
        parts = {}
        connection = store.engine.raw_connection()
        try:
            cursor = connection.cursor()
            for name, (sql, columns) in _SQL.items():
                cursor.execute(sql + where)
                parts[name] = pd.DataFrame.from_records(cursor.fetchall(), columns=columns)
        finally:
            connection.close()
    except Exception as exc:  # a schema this code does not know: the public API still works
        from tvrl_bench.tracking.store_wait import is_locked

        if is_locked(exc):
            raise  # waited for by the caller (tracking/store_wait.py), not read slowly instead
        log.debug("reading runs with SQL failed (%s); using search_runs", exc)
        return None
    frame = parts["runs"].set_index("run_id")
    if frame.empty:
        return pd.DataFrame(columns=list(RUN_COLUMNS))
    metrics = parts["metrics"]
    is_nan = metrics["is_nan"].astype(bool)
    metrics["value"] = metrics["value"].astype(float).where(~is_nan, float("nan"))
    nan = metrics[is_nan].groupby("run_id")["key"].agg(lambda keys: tuple(sorted(keys)))
    frame[NAN_METRICS] = [nan.get(run_id, ()) for run_id in frame.index]
    wide = [
        parts[name].pivot(index="run_id", columns="key", values="value").add_prefix(prefix)
        for name, prefix in (("params", "params."), ("metrics", "metrics."), ("tags", "tags."))
        if len(parts[name])
    ]
    frame = frame.join(wide) if wide else frame
    frame.columns.name = None
    return frame.reset_index()


def runs_frame(runs: list[Any]) -> pd.DataFrame:
    """One row per `mlflow.entities.Run`: RUN_COLUMNS, params.<k>, metrics.<k>, tags.<k>."""
    records = []
    for run in runs:
        info, data = run.info, run.data
        record: dict[str, Any] = {
            "run_id": info.run_id,
            "run_name": info.run_name,
            "status": info.status,
            "start_time": info.start_time,
            "end_time": info.end_time,
        }
        record.update({f"params.{k}": v for k, v in data.params.items()})
        record.update({f"metrics.{k}": v for k, v in data.metrics.items()})
        record.update({f"tags.{k}": v for k, v in data.tags.items()})
        record[NAN_METRICS] = tuple(sorted(k for k, v in data.metrics.items() if math.isnan(v)))
        records.append(record)
    if not records:
        return pd.DataFrame(columns=list(RUN_COLUMNS))
    return pd.DataFrame.from_records(records)
