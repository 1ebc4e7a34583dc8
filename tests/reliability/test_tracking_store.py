"""A tracking store that cannot be used fails in seconds, in one line naming the URI and the fix; every command
takes the URI from --tracking-uri, else $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db."""

from __future__ import annotations

import time

from tests.reliability.helpers import assert_error, files_in, run, write_study

TOY = "components/profiles/toy.gin"
UNREACHABLE = "http://127.0.0.1:9"


def timed(*args, **kwargs):
    started = time.monotonic()
    result = run(*args, **kwargs)
    return result, time.monotonic() - started


def test_an_unreachable_server_fails_fast_for_every_command(tmp_path):
    study = write_study(tmp_path, "/nowhere")
    before = files_in(tmp_path)
    for script, args in (("tvrl-train", [TOY, "--out", str(tmp_path / "out")]),
                         ("tvrl-sweep", [str(study), "--out", str(tmp_path / "out")]),
                         ("tvrl-report", ["--study", "tiny", "--out", str(tmp_path / "out")])):
        result, seconds = timed(tmp_path, script, *args, "--tracking-uri", UNREACHABLE)
        assert_error(result, script, 2, UNREACHABLE, "start it")
        assert seconds < 30, f"{script} took {seconds:.0f} s to give up"  # (MLflow alone retries for minutes)
    # $MLFLOW_TRACKING_URI is honoured by every command when --tracking-uri is not given
    for script, args in (("tvrl-train", [TOY, "--out", str(tmp_path / "out")]),
                         ("tvrl-sweep", [str(study), "--out", str(tmp_path / "out")])):
        result = run(tmp_path, script, *args, env={"MLFLOW_TRACKING_URI": UNREACHABLE})
        assert_error(result, script, 2, UNREACHABLE)
    assert files_in(tmp_path) == before


def test_a_file_that_is_not_a_database_or_a_folder_is_named(tmp_path):
    study = write_study(tmp_path, "/nowhere")
    (tmp_path / "notes.db").write_text("these are my notes, not a database\n")
    (tmp_path / "folder.db").mkdir()
    before = files_in(tmp_path)
    for uri, needles in ((f"sqlite:///{tmp_path / 'notes.db'}", ["notes.db is not an SQLite database", "--tracking-uri"]),
                         (f"sqlite:///{tmp_path / 'folder.db'}", ["folder.db is a folder", "name a file"])):
        for script, args in (("tvrl-train", [TOY, "--out", str(tmp_path / "out")]),
                             ("tvrl-sweep", [str(study), "--out", str(tmp_path / "out")]),
                             ("tvrl-report", ["--study", "tiny", "--out", str(tmp_path / "out")])):
            result, seconds = timed(tmp_path, script, *args, "--tracking-uri", uri)
            assert_error(result, script, 2, uri, *needles)
            assert seconds < 30
    assert files_in(tmp_path) == before
    assert (tmp_path / "notes.db").read_text().startswith("these are my notes")
