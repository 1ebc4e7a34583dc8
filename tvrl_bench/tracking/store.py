"""The tracking store every command talks to: one URI rule, a fast check before use, and errors that name it.

URI rule (every console script): `--tracking-uri`, else `$MLFLOW_TRACKING_URI`, else `sqlite:///mlflow.db`.

`check_store(uri)` takes a few seconds at most and raises TrackingError, naming the URI and the fix, when
- an SQLite file is not a database, or it (or its folder) cannot be written;
- an SQLite file is a database of something else (no MLflow tables): MLflow would add its 65 tables to it;
- an `http(s)://` server does not answer (three tries over about two seconds).
It creates nothing. `open_store(uri)`, called before MLflow first touches a store in a process, opens an SQLite
store under a lock on its folder, so that when several commands first touch a new store together, one creates
MLflow's tables and the others wait for it (MLflow alone races: duplicate columns, half-made tables).

A store that is locked for a while (another process holding a long write, a backup copying the file) is waited
for: every MLflow call through `client_for` retries while SQLite says "database is locked", for up to
$TVRL_STORE_PATIENCE_S seconds (default 300), with one warning line; past that it fails as a TrackingError.
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
import re
import sqlite3
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

log = logging.getLogger(__name__)

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
PATIENCE_ENV, DEFAULT_PATIENCE_S = "TVRL_STORE_PATIENCE_S", 300.0
URI_ENV = "MLFLOW_TRACKING_URI"
SQLITE_PREFIX = "sqlite:///"
SQLITE_MAGIC = b"SQLite format 3\x00"

# Bounded MLflow HTTP retries (MLflow's defaults wait about four minutes for an unreachable server); a value
# the user set in the environment wins.
HTTP_LIMITS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "0.2",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "30",
}


class TrackingError(RuntimeError):
    """The tracking store cannot be used; the message names the URI and the fix."""


def resolve_uri(uri: str | None) -> str:
    """`uri` if given, else $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db."""
    return uri or os.environ.get(URI_ENV) or DEFAULT_TRACKING_URI


def sqlite_path(uri: str) -> Path | None:
    """The database file of a `sqlite:///` URI (None for other URIs and in-memory databases)."""
    if not uri.startswith(SQLITE_PREFIX):
        return None
    path = uri[len(SQLITE_PREFIX):].split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


def artifact_location(uri: str, experiment: str) -> str | None:
    """Where a new experiment of the store at `uri` keeps its artifacts: beside an SQLite file, in
    `<file stem>_artifacts/<experiment>` (a file URI); None for other stores (a server decides)."""
    path = sqlite_path(uri)
    if path is None:
        return None
    folder = path.resolve().parent / f"{path.stem}_artifacts" / (re.sub(r"[^\w.-]+", "_", experiment) or "experiment")
    return folder.as_uri()


def bound_retries() -> None:
    """Cap MLflow's HTTP retries and timeout for this process and the trial processes it starts."""
    for name, value in HTTP_LIMITS.items():
        os.environ.setdefault(name, value)


def check_store(uri: str, write: bool = True) -> None:
    """Fail fast (TrackingError) when the store at `uri` cannot be used; see the module docstring."""
    bound_retries()
    path = sqlite_path(uri)
    if path is not None:
        _check_sqlite(uri, path, write)
    elif uri.startswith(("http://", "https://")):
        _check_server(uri)


def _check_sqlite(uri: str, path: Path, write: bool) -> None:
    fix = "pass another --tracking-uri (or set $MLFLOW_TRACKING_URI)"
    if path.is_dir():
        raise TrackingError(f"tracking URI {uri}: {path} is a folder, not an SQLite file; name a file in it, {fix}")
    if path.exists():
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
        if head and head != SQLITE_MAGIC:
            raise TrackingError(
                f"tracking URI {uri}: {path} is not an SQLite database (it holds something else); "
                f"move it away or {fix}"
            )
        if head:
            _refuse_foreign_database(uri, path)
        if write:
            _check_writable_database(uri, path, fix)
        return
    if not write:
        return
    folder = _existing_ancestor(path.parent)
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tvrl-write-check-"):
            pass
    except OSError as exc:
        raise TrackingError(
            f"tracking URI {uri}: cannot create the database in {folder} ({exc.strerror or exc}); "
            f"make the folder writable or {fix}"
        ) from None


def _existing_ancestor(folder: Path) -> Path:
    folder = folder if str(folder) else Path(".")
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return folder.parent
    return folder


def _check_writable_database(uri: str, path: Path, fix: str) -> None:
    try:
        connection = sqlite3.connect(f"file:{path.resolve()}?mode=rw", uri=True, timeout=5)
        try:
            connection.execute("PRAGMA schema_version").fetchone()
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("ROLLBACK")
        finally:
            connection.close()
    except sqlite3.DatabaseError as exc:
        reason = str(exc)
        if "locked" in reason or "busy" in reason:
            return  # another process is writing right now: the store works
        if "not a database" in reason or "malformed" in reason:
            raise TrackingError(f"tracking URI {uri}: {path} is not a usable SQLite database ({reason}); {fix}") from None
        raise TrackingError(
            f"tracking URI {uri}: cannot write {path} ({reason}); make the file and its folder writable or {fix}"
        ) from None


MLFLOW_TABLES = {"experiments", "alembic_version"}


def _refuse_foreign_database(uri: str, path: Path) -> None:
    """A database with tables but none of MLflow's belongs to something else (an annotation page's judgments,
    another tool's data): MLflow would migrate its schema into it, so refuse it."""
    try:
        connection = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, timeout=30)
        try:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            connection.close()
    except sqlite3.DatabaseError:
        return  # unreadable or locked: the writability check (or MLflow) reports it
    if tables and not tables & MLFLOW_TABLES:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise TrackingError(
            f"tracking URI {uri}: {path} is an SQLite database of something else (tables {shown}), not an MLflow "
            "store, and MLflow would add its tables to it; pass the MLflow database with --tracking-uri (for "
            "example sqlite:///mlflow.db) or set $MLFLOW_TRACKING_URI"
        )


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
    with _folder_lock(_existing_ancestor(path.parent)):
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
            _refuse_foreign_database(uri, path)
        MlflowClient(uri).search_experiments(max_results=1)
    _OPENED.add(uri)


def client_for(uri: str) -> Any:
    """An `mlflow.MlflowClient` for `uri`, the store opened first (`open_store`), whose calls wait out a locked
    SQLite store (`PatientClient`)."""
    from mlflow.tracking import MlflowClient

    logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)  # a traceback per failed statement
    open_store(uri)
    with tracking_errors(uri):
        return PatientClient(MlflowClient(uri), uri)


def patience_s() -> float:
    """How long a locked store is waited for: $TVRL_STORE_PATIENCE_S, else 300 s."""
    return float(os.environ.get(PATIENCE_ENV) or DEFAULT_PATIENCE_S)


def is_locked(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" (busy) error, however MLflow or SQLAlchemy wrapped it."""
    text = str(exc)
    return "database is locked" in text or "database table is locked" in text


class PatientClient:
    """An MlflowClient whose calls are retried while the store is locked, up to $TVRL_STORE_PATIENCE_S seconds.

    A locked SQLite write did not commit, so trying it again is safe."""

    def __init__(self, client: Any, uri: str):
        self._client = client
        self._uri = uri

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute) or name.startswith("_"):
            return attribute

        def patiently(*args, **kwargs):
            patience = patience_s()
            deadline, delay, warned = time.monotonic() + patience, 0.5, False
            while True:
                try:
                    return attribute(*args, **kwargs)
                except Exception as exc:
                    if not is_locked(exc) or time.monotonic() + delay > deadline:
                        raise
                    if not warned:
                        log.warning("the tracking store %s is locked by another process; waiting for it (up to %.0f s, "
                                    "$%s)", self._uri, patience, PATIENCE_ENV)
                        warned = True
                    time.sleep(delay)
                    delay = min(2 * delay, 10.0)

        return patiently


def _check_server(uri: str, tries: int = 3) -> None:
    url = uri.rstrip("/") + "/health"
    reason = ""
    for attempt in range(tries):
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answered: a server is there (its own API calls will tell the rest)
        except (urllib.error.URLError, OSError) as exc:
            reason = str(getattr(exc, "reason", exc))
        if attempt + 1 < tries:
            time.sleep(0.5 * (attempt + 1))
    raise TrackingError(
        f"cannot reach the MLflow tracking server at {uri} ({reason}); start it (`mlflow server --host HOST "
        "--port PORT --backend-store-uri sqlite:///mlflow.db`) or pass another --tracking-uri"
    )


def describe_failure(uri: str, exc: BaseException) -> str:
    """One line for a failure of the store at `uri`: its first line, the URI and the fix."""
    text = str(exc).strip().splitlines()
    reason = text[0] if text else type(exc).__name__
    if len(reason) > 300:
        reason = reason[:300] + "..."
    if is_locked(exc):
        return (
            f"the MLflow tracking store at {uri} stayed locked by another process for more than {patience_s():.0f} s "
            f"(${PATIENCE_ENV}); once it is free, rerun the same command: a trial resumes from its last checkpoint"
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
