"""Parsing table definitions: errors that name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tvrl_bench.report.errors import ReportError
from tvrl_bench.report.tables.definitions import parse_table_file


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text,message",
    [
        ('titel = "x"\n[rows]\nby=["a"]\n[[columns]]\nmetric="m"\n',
         r"t.toml: unknown key 'titel'; did you mean 'title'"),
        ('title = "x"\n[[columns]]\nmetric="m"\n', r"t.toml: a metrics table needs a \[rows\] section"),
        ('[rows]\nby=["a"]\n', r"t.toml: a metrics table needs at least one \[\[columns\]\] entry"),
        ('[rows]\nby=["a"]\nlabel="{b}"\n[[columns]]\nmetric="m"\n', r"label uses \{b\}, which is not in by"),
        ('[rows]\nby=["a"]\n[[columns]]\ndelta="m"\n', r"\[\[columns\]\] entry 1: a delta needs baseline"),
        ('[rows]\nby=["a"]\n[[columns]]\nmetric="m"\ndelta="m"\n', r"entry 1: give exactly one of metric"),
        ('[rows]\nby=["a"]\n[rows.params.b]\norder=["x"]\n[[columns]]\nmetric="m"\n',
         r"\[rows.params.b\] names a param"),
        ('[rows]\nby=["a"\n', r"t.toml: TOML syntax error"),
        ('kind = "pie"\n', r"kind = 'pie' is not one of"),
        ('[rows]\nby=["a"]\n[[rows.fixed]]\nlabel="B"\nposition="middle"\n[[columns]]\nmetric="m"\n',
         r"\[\[rows.fixed\]\] entry 1: position must be 'first' or 'last'"),
        ('[rows]\nby=["a"]\n[[columns]]\nsteps_to_half_gain="m"\nbaseline={a="x"}\n',
         r"\[\[columns\]\] entry 1: unknown key 'baseline'.*allowed keys: label, steps_to_half_gain, where"),
        ('[rows]\nby=["a"]\n[[columns]]\nsteps_to_half_gain="m"\nmetric="m"\n',
         r"entry 1: give exactly one of metric = \.\.\., delta = \.\.\., categories = \.\.\., steps_to_half_gain"),
    ],
)
def test_definition_errors_name_the_file_and_the_key(tmp_path, text, message):
    with pytest.raises(ReportError, match=message):
        parse_table_file(write(tmp_path, text))
