"""Waiting out a locked SQLite tracking store: $TVRL_STORE_PATIENCE_S seconds to the second, one warning line.

Another process holding a long write (a backup copying the file, a sweep's report) locks an SQLite store for a
while. Every access of a command to its store goes through `patiently(uri, call)` (MLflow calls through
`PatientClient`, the report's direct SQL reads, the store's opening): a probe (`wait_unlocked`: one write
transaction opened and rolled back without waiting) finds a lock at once, and the call then waits for it. The
waits of one process on one store share one deadline: the first access that finds the store locked starts the
wait and warns once, and every access meanwhile (another thread's, a retry's) gives up at that start plus the
patience (default 300 s), as a locked-store error (sqlite3.OperationalError "database is locked", which
`store.describe_failure` words). The wait ends when the store is found free or an access gives up; a lock met
later is a new wait. What a command does because an access gave up (a failed trial marking its run) goes through
`without_waiting(uri)`: those accesses try the store once and give up at once on a lock, so a lock taken mid-run
is waited for once, to the patience, with one warning, as at start-up. The report's direct SQL reads raise a lock
instead of falling back to slower reads, so no access waits twice for one lock.
A locked write did not commit, so trying it again is safe.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from tvrl_bench.tracking.store_uri import sqlite_path

__all__ = ["PATIENCE_ENV", "PatientClient", "is_locked", "patience_s", "patiently", "wait_unlocked", "without_waiting"]

log = logging.getLogger("tvrl_bench.tracking.store")

PATIENCE_ENV, DEFAULT_PATIENCE_S = "TVRL_STORE_PATIENCE_S", 300.0
T = TypeVar("T")

_WAITING_SINCE: dict[str, float] = {}  # uri -> when this process started waiting for it (monotonic)
_NOT_WAITING: set[str] = set()  # uris whose accesses give up at once on a lock (`without_waiting`)


def patience_s() -> float:
    """How long a locked store is waited for: $TVRL_STORE_PATIENCE_S, else 300 s."""
    return float(os.environ.get(PATIENCE_ENV) or DEFAULT_PATIENCE_S)


def is_locked(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" (busy) error, however MLflow or SQLAlchemy wrapped it."""
    text = str(exc)
    return "database is locked" in text or "database table is locked" in text


@contextlib.contextmanager
def without_waiting(uri: str) -> Iterator[None]:
    """In the block, an access to the store at `uri` that finds it locked gives up at once, without a warning (what
    a command does after an access gave up on the lock: the store is still locked)."""
    _NOT_WAITING.add(uri)
    try:
        yield
    finally:
        _NOT_WAITING.discard(uri)


def _deadline(uri: str) -> float:
    """The end of this process's wait for `uri`, starting the wait (and its one warning) if none is running."""
    if uri in _NOT_WAITING:
        return time.monotonic() - 1.0
    if uri not in _WAITING_SINCE:
        _WAITING_SINCE[uri] = time.monotonic()
        log.warning("the tracking store %s is locked by another process; waiting for it (up to %.0f s, $%s)",
                    uri, patience_s(), PATIENCE_ENV)
    return _WAITING_SINCE[uri] + patience_s()


def wait_unlocked(path: Path, deadline: Callable[[], float]) -> None:
    """Return once the SQLite file at `path` takes a write transaction (opened and rolled back); `deadline()`
    starts the wait the first time it must wait; sqlite3.OperationalError "database is locked" when it is still
    locked then (time.monotonic), to the second. A file that is not there is not waited for."""
    if not path.is_file():
        return
    end = None
    while True:
        remaining = 0.0 if end is None else max(0.0, end - time.monotonic())
        connection = sqlite3.connect(f"file:{path.resolve()}?mode=rw", uri=True, timeout=remaining)
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("ROLLBACK")
            return
        except sqlite3.OperationalError as exc:
            if not is_locked(exc) or end is not None and time.monotonic() >= end:
                raise
            end = deadline()
        finally:
            connection.close()


def patiently(uri: str, call: Callable[[], T]) -> T:
    """`call()`, waited for while the store at `uri` is locked (see the module); its own errors as they are."""
    path = sqlite_path(uri)
    delay = 0.5
    while True:
        try:
            if path is not None:
                wait_unlocked(path, lambda: _deadline(uri))  # a lock found at once, waited for to the second
                _WAITING_SINCE.pop(uri, None)  # free now: a lock met from here on is another wait
            result = call()
        except Exception as exc:
            if not is_locked(exc) or time.monotonic() + delay > _deadline(uri):
                _WAITING_SINCE.pop(uri, None)
                raise
            time.sleep(delay)  # a lock taken between the probe and the call
            delay = min(2 * delay, 10.0)
            continue
        _WAITING_SINCE.pop(uri, None)
        return result


class PatientClient:
    """An MlflowClient whose calls are retried while the store is locked (`patiently`)."""

    def __init__(self, client: Any, uri: str):
        self._client = client
        self._uri = uri

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute) or name.startswith("_"):
            return attribute
        return lambda *args, **kwargs: patiently(self._uri, lambda: attribute(*args, **kwargs))
