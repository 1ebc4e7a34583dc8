"""Metric histories of a study's runs, read once per (run, metric) and shared by every table and plot of a report."""

from __future__ import annotations

from typing import Any

import pandas as pd


class HistoryCache:
    """Metric histories fetched once per (run, metric) and shared by every table of a report.

    On a SQL tracking store one SELECT reads a metric's history for many runs at once; otherwise (or if that
    fails) it is one `get_metric_history` request per run.
    """

    def __init__(self, client: Any) -> None:
        self.client = client
        self._cache: dict[tuple[str, str], pd.Series] = {}

    def prefetch(self, run_ids: list[str], key: str) -> None:
        """Read the histories of `key` for every run not cached yet, in one query where the store allows it."""
        missing = [r for r in dict.fromkeys(run_ids) if (r, key) not in self._cache]
        if not missing:
            return
        rows = _sql_histories(self.client, missing, key)
        if rows is None:
            return  # get() falls back to one request per run
        for run_id in missing:
            self._cache[(run_id, key)] = _series(rows.get(run_id, []))

    def get(self, run_id: str, key: str) -> pd.Series:
        """values indexed by step (the last value logged at a step wins), sorted by step."""
        if (run_id, key) not in self._cache:
            history = self.client.get_metric_history(run_id, key)
            self._cache[(run_id, key)] = _series([(m.step, m.timestamp, m.value) for m in history])
        return self._cache[(run_id, key)]


def _series(points: list[tuple[int, int, float]]) -> pd.Series:
    """(step, timestamp, value) points -> values by step, the latest timestamp winning at a step."""
    ordered = sorted(points, key=lambda p: (p[0], p[1]))
    return pd.Series({step: value for step, _, value in ordered}, dtype=float).sort_index()


def _sql_histories(client: Any, run_ids: list[str], key: str) -> dict[str, list[tuple[int, int, float]]] | None:
    from tvrl_bench.tracking.store_wait import is_locked, patiently

    try:
        from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
        from sqlalchemy import bindparam, text

        store = client._tracking_client.store
        if not isinstance(store, SqlAlchemyStore):
            return None
        query = text(
            "SELECT run_uuid, step, timestamp, value, is_nan FROM metrics WHERE key = :key AND run_uuid IN :ids"
        ).bindparams(bindparam("ids", expanding=True))
        out: dict[str, list[tuple[int, int, float]]] = {}
        def read() -> None:
            out.clear()
            with store.engine.connect() as conn:
                for run_id, step, timestamp, value, is_nan in conn.execute(query, {"key": key, "ids": run_ids}):
                    out.setdefault(run_id, []).append((int(step), int(timestamp),
                                                       float("nan") if is_nan else float(value)))

        patiently(client.tracking_uri, read)  # a locked store waited for, as every MLflow call
        return out
    except Exception as exc:  # an unknown schema: the per-run requests still work
        if is_locked(exc):
            raise
        return None
