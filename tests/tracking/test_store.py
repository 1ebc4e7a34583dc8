"""The tracking store: the URI rule, the fast check before use, and errors that name the URI and the fix."""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from pathlib import Path

import pytest

from tvrl_bench.tracking.store import (DEFAULT_TRACKING_URI, HTTP_LIMITS, TrackingError, bound_retries, check_store,
                                       describe_failure, is_tracking_failure, open_store, resolve_uri, sqlite_path,
                                       tracking_errors)


def test_resolve_uri_prefers_the_argument_then_the_environment_then_the_default(monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///env.db")
    assert resolve_uri("sqlite:///given.db") == "sqlite:///given.db"
    assert resolve_uri(None) == "sqlite:///env.db"
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    assert resolve_uri(None) == DEFAULT_TRACKING_URI == "sqlite:///mlflow.db"
    assert resolve_uri("") == DEFAULT_TRACKING_URI


def test_sqlite_path_of_relative_absolute_and_other_uris():
    assert sqlite_path("sqlite:///mlflow.db") == Path("mlflow.db")
    assert sqlite_path("sqlite:////abs/folder/m.db") == Path("/abs/folder/m.db")
    assert sqlite_path("sqlite:///m.db?timeout=20") == Path("m.db")
    assert sqlite_path("sqlite:///:memory:") is None
    assert sqlite_path("sqlite:///") is None
    assert sqlite_path("http://127.0.0.1:5000") is None
    assert sqlite_path("file:///tmp/mlruns") is None


def test_bound_retries_caps_mlflow_http_waits_but_keeps_a_value_the_user_set(monkeypatch):
    for name in HTTP_LIMITS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "7")
    bound_retries()
    assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "7"
    assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == HTTP_LIMITS["MLFLOW_HTTP_REQUEST_MAX_RETRIES"]


def test_a_new_database_in_a_writable_folder_passes_and_nothing_is_created(tmp_path, monkeypatch):
    import tempfile

    (tmp_path / "sub").mkdir()
    probed = []  # the write check really ran: it probed the folder with a temporary file ...
    real = tempfile.NamedTemporaryFile
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", lambda *a, **k: probed.append(k["dir"]) or real(*a, **k))
    assert check_store(f"sqlite:///{tmp_path / 'sub' / 'm.db'}") is None
    assert check_store(f"sqlite:///{tmp_path / 'not' / 'yet' / 'm.db'}") is None  # folders MLflow would create
    assert [Path(folder) for folder in probed] == [tmp_path / "sub", tmp_path]
    # ... and left nothing behind: no database, no folder, no probe file
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["sub"]
    assert not (tmp_path / "sub" / "m.db").exists() and not (tmp_path / "not").exists()


def test_an_existing_sqlite_database_passes(tmp_path):
    path = tmp_path / "m.db"
    with sqlite3.connect(path) as connection:
        connection.execute("create table experiments (x integer)")
    connection.close()
    check_store(f"sqlite:///{path}")
    check_store(f"sqlite:///{path}", write=False)


def test_a_folder_is_named_as_not_a_file(tmp_path):
    uri = f"sqlite:///{tmp_path / 'folder.db'}"
    (tmp_path / "folder.db").mkdir()
    with pytest.raises(TrackingError) as caught:
        check_store(uri)
    assert uri in str(caught.value) and "is a folder" in str(caught.value) and "--tracking-uri" in str(caught.value)


@pytest.mark.parametrize("write", [True, False])
def test_a_file_that_is_not_a_database_is_named_and_left_alone(tmp_path, write):
    path = tmp_path / "notes.db"
    path.write_text("my notes\n")
    uri = f"sqlite:///{path}"
    with pytest.raises(TrackingError) as caught:
        check_store(uri, write=write)
    message = str(caught.value)
    assert uri in message and "notes.db is not an SQLite database" in message and "--tracking-uri" in message
    assert path.read_text() == "my notes\n"


def test_a_damaged_database_is_named(tmp_path):
    path = tmp_path / "broken.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)  # the right header, then garbage
    uri = f"sqlite:///{path}"
    with pytest.raises(TrackingError) as caught:
        check_store(uri)
    assert uri in str(caught.value) and "not a usable SQLite database" in str(caught.value)


def test_an_unreachable_server_fails_in_seconds_naming_the_uri_and_how_to_start_one():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    uri = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    with pytest.raises(TrackingError) as caught:
        check_store(uri)
    assert time.monotonic() - started < 15
    assert uri in str(caught.value) and "mlflow server" in str(caught.value)


def test_other_uris_are_not_checked(tmp_path, monkeypatch):
    import tempfile
    import urllib.request

    from tvrl_bench.tracking import store_checks

    touched = []

    def refuse(what):
        def touch(*args, **kwargs):
            touched.append(what)
            raise OSError(f"{what} must not be touched")
        return touch

    # every way check_store looks at a store fails loudly here ...
    monkeypatch.setattr(urllib.request, "urlopen", refuse("urlopen"))
    monkeypatch.setattr(sqlite3, "connect", refuse("sqlite3.connect"))
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", refuse("NamedTemporaryFile"))
    monkeypatch.setattr(store_checks, "_check_sqlite", refuse("_check_sqlite"))
    monkeypatch.setattr(store_checks, "_check_server", refuse("_check_server"))
    garbage = tmp_path / "notes.db"
    garbage.write_text("my notes\n")  # would be refused as "not an SQLite database" if it were checked
    before = sorted(p.name for p in tmp_path.iterdir())
    # ... and a URI that is neither sqlite:/// nor http(s):// passes, even one naming nothing usable
    for uri in ("file:///nonexistent/mlruns", f"file://{garbage}", "databricks", "sqlite:///:memory:",
                "postgresql://nobody@127.0.0.1:1/none", "ftp://127.0.0.1:1/mlruns"):
        assert check_store(uri) is None, uri
        assert check_store(uri, write=False) is None, uri
    assert touched == []
    assert sorted(p.name for p in tmp_path.iterdir()) == before and garbage.read_text() == "my notes\n"


def test_tracking_errors_name_the_uri_of_a_store_failure():
    uri = "sqlite:///somewhere.db"
    with pytest.raises(TrackingError) as caught, tracking_errors(uri):
        raise sqlite3.OperationalError("disk I/O error")
    message = str(caught.value)
    assert uri in message and "disk I/O error" in message and "--tracking-uri" in message
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)


def test_a_store_locked_past_the_patience_says_so_and_how_to_resume(monkeypatch):
    monkeypatch.setenv("TVRL_STORE_PATIENCE_S", "7")
    with pytest.raises(TrackingError, match=r"stayed locked by another process for more than 7 s "
                                            r"\(\$TVRL_STORE_PATIENCE_S\).*rerun the same command"):
        with tracking_errors("sqlite:///somewhere.db"):
            raise sqlite3.OperationalError("database is locked")


def test_a_patient_client_retries_only_while_the_store_is_locked(monkeypatch):
    from tvrl_bench.tracking.store import PatientClient

    monkeypatch.setattr(time, "sleep", lambda seconds: None)
    calls = []

    class Client:
        name = "not a method"

        def log(self, value):
            calls.append(value)
            if len(calls) < 3:
                raise sqlite3.OperationalError("database is locked")
            return value

        def broken(self):
            calls.append("broken")
            raise sqlite3.OperationalError("disk I/O error")

    client = PatientClient(Client(), "sqlite:///x.db")
    assert client.log(5) == 5 and calls == [5, 5, 5] and client.name == "not a method"
    calls.clear()
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        client.broken()
    assert calls == ["broken"]  # other failures are not retried
    monkeypatch.setenv("TVRL_STORE_PATIENCE_S", "0")
    calls.clear()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        client.log(1)
    assert calls == [1]


def test_tracking_errors_leave_other_errors_as_they_are():
    with pytest.raises(KeyError), tracking_errors("sqlite:///x.db"):
        raise KeyError("not the store's fault")
    original = TrackingError("already explained")
    with pytest.raises(TrackingError) as caught, tracking_errors("sqlite:///x.db"):
        raise original
    assert caught.value is original


def test_is_tracking_failure_recognises_mlflow_and_database_errors_only():
    from mlflow.exceptions import MlflowException

    assert is_tracking_failure(MlflowException("no such run"))
    assert is_tracking_failure(sqlite3.DatabaseError("malformed"))
    assert not is_tracking_failure(ValueError("mine"))
    assert not is_tracking_failure(TrackingError("mine"))


def test_describe_failure_keeps_one_short_line():
    line = describe_failure("sqlite:///m.db", RuntimeError("first line " + "x" * 500 + "\nsecond line"))
    assert "\n" not in line and "second line" not in line
    assert "sqlite:///m.db" in line and ("first line " + "x" * 289 + "...") in line and ("x" * 290) not in line
    assert "RuntimeError" in describe_failure("sqlite:///m.db", RuntimeError())


def tables_of(path: Path) -> set[str]:
    with sqlite3.connect(path) as connection:
        return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_an_sqlite_database_of_something_else_is_refused_and_left_as_it_was(tmp_path):
    judgments = tmp_path / "judgments.db"
    with sqlite3.connect(judgments) as connection:
        connection.execute("CREATE TABLE judgments (pair TEXT, verdict TEXT)")
    for write in (True, False):
        with pytest.raises(TrackingError, match=r"judgments\.db is an SQLite database of something else \(tables "
                                                r"judgments\), not an MLflow store.*pass the MLflow database"):
            check_store(f"sqlite:///{judgments}", write=write)
    with pytest.raises(TrackingError, match="not an MLflow store"):
        open_store(f"sqlite:///{judgments}")
    assert tables_of(judgments) == {"judgments"}
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()  # an SQLite file without tables becomes a store
    check_store(f"sqlite:///{empty}")
    open_store(f"sqlite:///{empty}")
    assert {"experiments", "alembic_version", "runs"} <= tables_of(empty)


FIRST_USE = "import sys; from tvrl_bench.tracking.store import client_for; client_for(sys.argv[1]).search_runs(['0'])"


@pytest.mark.integration
def test_processes_first_touching_a_new_store_together_create_its_tables_once(tmp_path):
    import subprocess
    import sys

    for attempt in range(2):
        uri = f"sqlite:///{tmp_path / f'new{attempt}.db'}"
        processes = [subprocess.Popen([sys.executable, "-c", FIRST_USE, uri], stderr=subprocess.PIPE, text=True)
                     for _ in range(4)]
        errors = [p.communicate(timeout=300)[1] for p in processes]
        assert [p.returncode for p in processes] == [0] * 4, "\n".join(errors)[-3000:]
        tables = tables_of(tmp_path / f"new{attempt}.db")
        assert {"experiments", "runs", "alembic_version"} <= tables
        assert not [t for t in tables if t.startswith("_alembic_tmp")]
    assert not (tmp_path / "mlruns").exists()


def test_an_empty_file_is_refused_by_a_reader_and_left_empty(tmp_path):
    """A 0-byte file is no store: a command that only reads (tvrl-report, a dry run) refuses it instead of letting
    MLflow write its tables into it; a writer may start a store there."""
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    uri = f"sqlite:///{path}"
    with pytest.raises(TrackingError, match=r"empty.db is an empty file, not an MLflow store.*--tracking-uri"):
        check_store(uri, write=False)
    assert path.stat().st_size == 0
    check_store(uri, write=True)


def hold_lock(path, seconds: float):
    """Another process holding an exclusive lock on the SQLite file at `path` for `seconds`; returns once held."""
    import subprocess
    import sys

    holder = subprocess.Popen([sys.executable, "-c", "import sqlite3, sys, time\n"
                               f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
                               "c.execute('BEGIN EXCLUSIVE')\nprint('held', flush=True)\n"
                               f"time.sleep({seconds})\nc.execute('ROLLBACK')"],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.parametrize("patience, held, succeeds", [(2, 8, False), (10, 3, True)])
def test_a_locked_store_is_waited_for_to_the_second_with_one_warning(tmp_path, monkeypatch, caplog, patience, held,
                                                                    succeeds):
    """The patience is honoured to the second (MLflow's own 20 s busy timeout per statement no longer stretches
    it), and the one warning comes when the wait starts."""
    import logging

    from tvrl_bench.tracking.store import client_for

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = client_for(uri)  # the store's tables, before it is locked
    monkeypatch.setenv("TVRL_STORE_PATIENCE_S", str(patience))
    holder = hold_lock(tmp_path / "mlflow.db", held)
    started, started_wall = time.monotonic(), time.time()
    try:
        with caplog.at_level(logging.WARNING, logger="tvrl_bench.tracking.store"):
            if succeeds:
                client.create_experiment("after the lock")
            else:
                with pytest.raises(sqlite3.OperationalError, match="locked"):
                    client.create_experiment("never")
        took = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    warnings = [r for r in caplog.records if "is locked by another process" in r.getMessage()]
    assert len(warnings) == 1 and f"up to {patience} s" in warnings[0].getMessage()
    assert warnings[0].created - started_wall < 1.5  # at the start of the wait, not after it
    if succeeds:
        assert held - 1 < took < held + 3
    else:
        assert patience - 0.5 < took < patience + 2
