"""`check_store(uri)`: a fast check of a tracking store before a command uses it (see tracking/store.py).

It takes a few seconds at most (it never waits for a locked SQLite file: a lock means another process is using
the store, which works), creates nothing, and raises TrackingError naming the URI and the fix when an
SQLite file is not a database, belongs to something else, is empty where a command only reads it, or cannot be
written (nor its folder), or when an `http(s)://` server does not answer.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from tvrl_bench.tracking.store_uri import SQLITE_MAGIC, TrackingError, bound_retries, sqlite_path


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
            refuse_foreign_database(uri, path)
        elif not write:  # reading an empty file: MLflow would write its tables into it and find nothing
            raise TrackingError(
                f"tracking URI {uri}: {path} is an empty file, not an MLflow store: nothing was ever logged to it; "
                f"pass the --tracking-uri the runs were logged to (or set $MLFLOW_TRACKING_URI)"
            )
        if write:
            _check_writable_database(uri, path, fix)
        return
    if not write:
        return
    folder = existing_ancestor(path.parent)
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tvrl-write-check-"):
            pass
    except OSError as exc:
        raise TrackingError(
            f"tracking URI {uri}: cannot create the database in {folder} ({exc.strerror or exc}); "
            f"make the folder writable or {fix}"
        ) from None


def existing_ancestor(folder: Path) -> Path:
    folder = folder if str(folder) else Path(".")
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return folder.parent
    return folder


def _check_writable_database(uri: str, path: Path, fix: str) -> None:
    try:
        connection = sqlite3.connect(f"file:{path.resolve()}?mode=rw", uri=True, timeout=0)  # a lock: it works
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


def refuse_foreign_database(uri: str, path: Path) -> None:
    """A database with tables but none of MLflow's belongs to something else (an annotation page's judgments,
    another tool's data): MLflow would migrate its schema into it, so refuse it."""
    try:
        connection = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, timeout=0)  # never waits
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
