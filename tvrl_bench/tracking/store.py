"""The tracking store every command talks to: one URI rule, a fast check before use, and errors that name it.

This module opens stores and hands out clients; the URI rule is in tracking/store_uri.py and the check in
tracking/store_checks.py (both re-exported here).

URI rule (every console script): `--tracking-uri`, else `$MLFLOW_TRACKING_URI`, else `sqlite:///mlflow.db`.

`check_store(uri)` takes a few seconds at most and raises TrackingError, naming the URI and the fix, when
- an SQLite file is not a database, or it (or its folder) cannot be written;
- an SQLite file is a database of something else (no MLflow tables): MLflow would add its 65 tables to it;
- an `http(s)://` server does not answer (three tries over about two seconds).
It creates nothing. `open_store(uri)`, called before MLflow first touches a store in a process, opens an SQLite
store under a lock on its folder, so that when several commands first touch a new store together, one creates
MLflow's tables and the others wait for it (MLflow alone races: duplicate columns, half-made tables).

A store that is locked for a while (another process holding a long write, a backup copying the file) is waited
for (tracking/store_wait.py): every access (MLflow calls through `client_for`, the store's opening, the report's
direct reads) finds a lock at once, then waits for it, for up to $TVRL_STORE_PATIENCE_S seconds (default 300)
counted to the second from the first access that found it, with one warning line when that wait starts, and past
that fails as a TrackingError. `check_store` never waits for a lock (a locked store is one that works).
MLflow's own ERROR log of each failed statement (a traceback per try) is silenced: the one-line error says it.

Artifacts (sample videos, credit heatmaps, tables) of an SQLite store live beside it, in `<file stem>_artifacts/`
(`mlflow.db` -> `mlflow_artifacts/<experiment>/`), never in the working directory; a server keeps its own.
MLflow's own waits are bounded too (`bound_retries`): left alone, an unreachable server is retried for minutes
and an unwritable SQLite file for two. `tracking_errors(uri)` turns an MLflow, SQLAlchemy or HTTP failure in
the middle of a command into a TrackingError with the URI.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from pathlib import Path
from typing import Any, Iterator

from tvrl_bench.tracking.store_checks import check_store, existing_ancestor, refuse_foreign_database
from tvrl_bench.tracking.store_wait import (PATIENCE_ENV, PatientClient, is_locked, patience_s, patiently,
                                            without_waiting)
from tvrl_bench.tracking.store_uri import (DEFAULT_TRACKING_URI, HTTP_LIMITS, SQLITE_PREFIX, URI_ENV, TrackingError,
                                           artifact_location, bound_retries, resolve_uri, sqlite_path)

__all__ = ["DEFAULT_TRACKING_URI", "HTTP_LIMITS", "PATIENCE_ENV", "SQLITE_PREFIX", "URI_ENV", "TrackingError",
           "artifact_location", "bound_retries", "check_store", "client_for", "describe_failure", "is_locked",
           "is_tracking_failure", "open_store", "patience_s", "patiently", "PatientClient", "resolve_uri",
           "sqlite_path", "store_lock", "tracking_errors", "without_waiting"]

log = logging.getLogger(__name__)


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on `folder` (flock on its descriptor: nothing is written), held by one process at a time."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


@contextlib.contextmanager
def store_lock(uri: str) -> Iterator[None]:
    """Hold the lock of an SQLite store's folder (the one `open_store` takes) for a check-then-write that two
    processes must not interleave; no lock for other stores."""
    path = sqlite_path(uri)
    if path is None:
        yield
        return
    with _folder_lock(existing_ancestor(path.parent)):
        yield


_OPENED: set[str] = set()


def open_store(uri: str) -> None:
    """Open MLflow's store at `uri` in this process (an SQLite one's tables created if new) under a lock on the
    database's folder, so that processes first touching a new store together create its tables once; later calls
    in the process return at once (MLflow keeps the opened store)."""
    path = sqlite_path(uri)
    if path is None or uri in _OPENED:
        return
    from mlflow.tracking import MlflowClient

    with store_lock(uri), tracking_errors(uri):
        if path.exists():
            refuse_foreign_database(uri, path)
        patiently(uri, lambda: MlflowClient(uri).search_experiments(max_results=1))
    _OPENED.add(uri)


def client_for(uri: str) -> Any:
    """An `mlflow.MlflowClient` for `uri`, the store opened first (`open_store`), whose calls wait out a locked
    SQLite store (`PatientClient`)."""
    from mlflow.tracking import MlflowClient

    logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)  # a traceback per failed statement
    open_store(uri)
    with tracking_errors(uri):
        return PatientClient(MlflowClient(uri), uri)


def describe_failure(uri: str, exc: BaseException) -> str:
    """One line for a failure of the store at `uri`: its first line, the URI and the fix."""
    text = str(exc).strip().splitlines()
    reason = text[0] if text else type(exc).__name__
    if len(reason) > 300:
        reason = reason[:300] + "..."
    if is_locked(exc):
        return (
            f"the MLflow tracking store at {uri} stayed locked by another process for more than {patience_s():.0f} s "
            f"(${PATIENCE_ENV}); once it is free, rerun the same command (what finished is kept; a trial resumes from "
            "its last checkpoint if it saved one), or set a longer patience"
        )
    return (
        f"the MLflow tracking store at {uri} failed: {reason}; check that it is reachable and writable "
        "(`mlflow server` running, or the SQLite file and its folder writable), or pass another --tracking-uri"
    )


def is_tracking_failure(exc: BaseException) -> bool:
    """True for errors raised by MLflow, SQLAlchemy, sqlite3 or the HTTP stack (not tvrl-bench's own)."""
    module = type(exc).__module__ or ""
    return module.split(".")[0] in {"mlflow", "sqlalchemy", "sqlite3", "requests", "urllib3"}


@contextlib.contextmanager
def tracking_errors(uri: str) -> Iterator[None]:
    """Turn a store failure in the block into a TrackingError naming `uri`."""
    try:
        yield
    except TrackingError:
        raise
    except Exception as exc:
        if is_tracking_failure(exc):
            raise TrackingError(describe_failure(uri, exc)) from exc
        raise
