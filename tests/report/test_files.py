"""A report's files are written together or not at all (tvrl_bench/report/files.py)."""

from __future__ import annotations

import os

import pytest

from tvrl_bench.report import files
from tvrl_bench.report.files import NotWritten, write_together


def test_every_file_is_written_and_replaces_the_previous_one(tmp_path):
    (tmp_path / "a.html").write_text("old page")
    paths = write_together(tmp_path / "study", {"a.html": "page", "b.csv": "x,y\n"})
    assert paths == [tmp_path / "study" / "a.html", tmp_path / "study" / "b.csv"]
    assert [p.read_text() for p in paths] == ["page", "x,y\n"]
    paths = write_together(tmp_path / "study", {"a.html": "new page", "b.csv": "z\n"})
    assert [p.read_text() for p in paths] == ["new page", "z\n"]
    assert sorted(p.name for p in (tmp_path / "study").iterdir()) == ["a.html", "b.csv"]  # no temporary file left


def test_a_folder_where_a_file_goes_leaves_every_file_as_it_was(tmp_path):
    (tmp_path / "a.html").write_text("old page")
    (tmp_path / "c.csv").mkdir()
    with pytest.raises(NotWritten, match=rf"^{tmp_path / 'c.csv'}: a folder stands where this file goes; move it "
                                         r"away$"):
        write_together(tmp_path, {"a.html": "new page", "b.csv": "new", "c.csv": "new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html", "c.csv"]
    assert (tmp_path / "a.html").read_text() == "old page"


def test_a_folder_that_cannot_be_made_is_named_with_the_fix(tmp_path):
    (tmp_path / "reports").write_text("a file")
    with pytest.raises(NotWritten, match=r"reports/study: cannot make this folder \(Not a directory\); pass an --out "
                                         r"you can write in"):
        write_together(tmp_path / "reports" / "study", {"a.html": "page"})


def test_a_rename_that_fails_says_what_was_replaced_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    real = os.replace
    done = []

    def replace(source, target):
        if done:  # the second rename fails, as on a file system that fills up or goes away
            raise OSError(5, "Input/output error", str(target))
        done.append(target)
        real(source, target)

    monkeypatch.setattr(files.os, "replace", replace)
    with pytest.raises(NotWritten, match=r"b.csv: Input/output error \(only a.html replaced\)"):
        write_together(tmp_path, {"a.html": "page", "b.csv": "new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html"]
