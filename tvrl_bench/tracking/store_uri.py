"""The tracking URI rule (every console script): `--tracking-uri`, else `$MLFLOW_TRACKING_URI`, else
`sqlite:///mlflow.db`; where an SQLite store keeps its artifacts; MLflow's HTTP waits bounded."""

from __future__ import annotations

import os
import re
from pathlib import Path

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
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
