"""A study's record (`tvrl-bench record save/load`): a staged study saved from one store and loaded into a new one
resumes there without rerunning a trial and reaches the same decisions; a file that is not a record is one line."""

from __future__ import annotations

import json

import pytest

from tests.sweeps.helpers import options
from tests.sweeps.test_stages import Logging, staged_study
from tests.tracking.helpers import fresh_store
from tvrl_bench.cli.main import main
from tvrl_bench.sweeps.driver import run_sweep

pytestmark = pytest.mark.integration


def test_a_saved_record_loaded_into_a_new_store_resumes_the_study_with_nothing_rerun(tmp_path_factory, tmp_path,
                                                                                    monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    uri_a, uri_b = fresh_store(tmp_path_factory, first), fresh_store(tmp_path_factory, second)
    study = staged_study(tmp_path)
    done = run_sweep(study, Logging, options(uri_a, tmp_path))
    record = tmp_path / "staged.jsonl"
    assert main(["record", "save", "staged", "--out", str(record), "--tracking-uri", uri_a]) == 0
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[0]["study"] == "staged" and "tvrl.decide" in lines[0]["parent_tags"] and len(lines) == 26
    assert all("wide_eval/overall" in line["metrics"] for line in lines[1:])

    assert main(["record", "load", str(record), "--tracking-uri", uri_b]) == 0
    assert main(["record", "load", str(record), "--tracking-uri", uri_b]) == 0  # a second load adds nothing
    out = capsys.readouterr().out
    assert "study staged: 25 trials logged" in out and "study staged: 0 trials logged" in out and "25 already there" in out
    executor = Logging()
    resumed = run_sweep(study, lambda: executor, options(uri_b, tmp_path / "elsewhere"))
    assert executor.commands == []
    assert resumed.decision_lines() == done.decision_lines()


@pytest.mark.parametrize("content, needle", [
    ("not json\n", ":1: not a JSON line"),
    ('{"key": "x"}\n', ":1: no record header"),
])
def test_a_file_that_is_not_a_record_is_one_line(tmp_path, capsys, content, needle):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    assert main(["record", "load", str(bad), "--tracking-uri", f"sqlite:///{tmp_path / 'm.db'}"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert needle in line and str(bad) in line
