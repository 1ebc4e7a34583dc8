"""A real MLflow tracking store (SQLite file) shared by the report tests; each test logs its own study."""

from __future__ import annotations

import itertools

import pytest
from mlflow import MlflowClient

from tests.report.helpers import StudyLog

_names = itertools.count()


@pytest.fixture(scope="session")
def mlflow_store(tmp_path_factory):
    """(tracking URI, client, artifact root) of one SQLite store for the session (creating one takes seconds)."""
    root = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    return uri, MlflowClient(tracking_uri=uri), root / "artifacts"


@pytest.fixture(scope="session")
def new_study(mlflow_store):
    """new_study(prefix, **kwargs) -> StudyLog with a unique study name."""
    uri, client, artifacts = mlflow_store

    def make(prefix: str, **kwargs) -> StudyLog:
        return StudyLog(client, f"{prefix}_{next(_names)}", artifacts, **kwargs)

    return make
