"""A locked SQLite store is waited for $TVRL_STORE_PATIENCE_S seconds to the second, with one warning, by every way
a command reaches it (tvrl_bench/tracking/store_wait.py): the store's check never waits, its opening and the
report's direct reads wait as MLflow calls do."""

from __future__ import annotations

import logging
import time

import pytest
from mlflow import MlflowClient

from tests.report.helpers import StudyLog
from tests.tracking.helpers import fresh_store
from tests.tracking.test_store import hold_lock
from tvrl_bench.tracking import store


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """(uri, database file) of a store holding study `locked` with one finished trial (made once: seconds)."""
    folder = tmp_path_factory.mktemp("locked_store")
    uri = fresh_store(tmp_path_factory, folder)  # a copy of the session's empty store: no migrations to wait for
    StudyLog(MlflowClient(uri), "locked", folder / "artifacts").trial({"seed": 0}, {"eval/overall": 0.5})
    return uri, folder / "m.db"


def waits(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "is locked by another process" in r.getMessage()]


def test_the_check_never_waits_for_a_locked_store(logged):
    uri, database = logged
    holder = hold_lock(database, 30)
    try:
        started = time.monotonic()
        store.check_store(uri, write=True)
        store.check_store(uri, write=False)
        assert time.monotonic() - started < 1.0
    finally:
        holder.kill()
        holder.wait()


def test_reading_a_study_from_a_locked_store_gives_up_at_the_patience_with_one_warning(logged, monkeypatch, caplog):
    from tvrl_bench.report.runs.study import load_study_runs

    uri, database = logged
    monkeypatch.setenv("TVRL_STORE_PATIENCE_S", "2")
    monkeypatch.setattr(store, "_OPENED", set())  # opened afresh, as a new command does
    holder = hold_lock(database, 30)
    try:
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="tvrl_bench.tracking.store"):
            with pytest.raises(Exception) as refused:
                load_study_runs("locked", uri)
        took = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert "stayed locked by another process for more than 2 s" in str(refused.value) and 1.5 < took < 3.5, took
    assert waits(caplog) == [f"the tracking store {uri} is locked by another process; waiting for it (up to 2 s, "
                             "$TVRL_STORE_PATIENCE_S)"]


def test_a_lock_shorter_than_the_patience_is_waited_out_once(logged, monkeypatch, caplog):
    from tvrl_bench.report.runs.study import load_study_runs

    uri, database = logged
    monkeypatch.setenv("TVRL_STORE_PATIENCE_S", "20")
    monkeypatch.setattr(store, "_OPENED", set())
    holder = hold_lock(database, 2)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="tvrl_bench.tracking.store"):
        runs = load_study_runs("locked", uri)
    took = time.monotonic() - started
    holder.wait()
    assert len(runs.trials) == 1 and 1.5 < took < 5 and len(waits(caplog)) == 1
