"""A store locked mid-run is waited for once (tracking/store_wait.py): once an access gave up at the patience, what
the command does because of it (a failed trial setting its error tag, marking its run FAILED) goes through
`without_waiting` and gives up at once instead of waiting the patience again, with no second warning; outside it a
store is waited for as usual."""

from __future__ import annotations

import logging
import sqlite3
import time

import pytest

from tests.tracking.test_store import hold_lock


def test_accesses_after_giving_up_on_a_lock_give_up_at_once_without_waiting(tmp_path, monkeypatch, caplog):
    from tvrl_bench.tracking.store import client_for, without_waiting

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = client_for(uri)
    run = client.create_run(client.create_experiment("e")).info.run_id  # step 1 logged, then the lock
    monkeypatch.setenv("TVRL_STORE_PATIENCE_S", "3")
    holder = hold_lock(tmp_path / "mlflow.db", 60)
    started = time.monotonic()
    try:
        with caplog.at_level(logging.WARNING, logger="tvrl_bench.tracking.store"):
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                client.log_metric(run, "loss", 1.0, step=2)  # waits to the patience, then gives up
            gave_up = time.monotonic() - started
            for cleanup in (lambda: client.set_tag(run, "tvrl.error", "locked"),
                            lambda: client.set_terminated(run, "FAILED")):
                with pytest.raises(sqlite3.OperationalError, match="locked"), without_waiting(uri):
                    cleanup()
        ended = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    warnings = [r for r in caplog.records if "is locked by another process" in r.getMessage()]
    assert 2.5 < gave_up < 5 and ended - gave_up < 1.5, (gave_up, ended)
    assert len(warnings) == 1
    client.set_terminated(run, "FAILED")  # free again: used as usual
    assert client.get_run(run).info.status == "FAILED"
