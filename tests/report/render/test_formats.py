"""Cell texts, escaping and the CSV layout of each column kind."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from tests.report.helpers import parse_html, parse_latex, parse_markdown
from tvrl_bench.report.render.formats import (cell_text, check_formats, csv_frame, tex_escape, to_csv, to_html,
                                              to_latex, to_markdown)
from tvrl_bench.report.stats import DeltaStat, ValueStat
from tvrl_bench.report.tables.table_result import Blank, Column, Count, Interval, Missing, Number, Row, TableResult


def test_cell_texts():
    assert cell_text(ValueStat(51.234, 1.005, 3)) == "51.23 ± 1.00"
    assert cell_text(ValueStat(51.234, float("nan"), 1)) == "51.23"
    assert cell_text(DeltaStat(5.3, 2.6, 8.0, 3, 3)) == "+5.30 [+2.60, +8.00]"
    assert cell_text(DeltaStat(1.2, -0.4, 2.8, 3, 3)) == "+1.20 [-0.40, +2.80]†"
    assert cell_text(DeltaStat(-3.0, -5.0, -1.0, 3, 3)) == "-3.00 [-5.00, -1.00]"
    assert cell_text(DeltaStat(1.0, float("nan"), float("nan"), 1, 3)) == "+1.00 [n/a]†"
    assert cell_text(Interval(48.1, 75.0, 50.0)) == "[48.10, 75.00]†"
    assert cell_text(Interval(55.0, 75.0, 50.0)) == "[55.00, 75.00]"
    assert cell_text(Number(12.5), 1) == "12.5"
    assert cell_text(Count(7)) == "7"
    assert cell_text(Blank()) == "" and cell_text(Missing("why")) == "—"


def test_tex_escape():
    assert tex_escape("toy_oracle 50% & #1 {x} ±1.0 Δ†") == (
        r"toy\_oracle 50\% \& \#1 \{x\} $\pm$1.0 $\Delta$$^\dagger$")


def test_formats_are_checked():
    assert check_formats("md, CSV") == ("md", "csv")
    assert check_formats(["html", "tex", "html"]) == ("html", "tex")
    with pytest.raises(ValueError, match="unknown report format 'docx'; choose from md, tex, csv, html"):
        check_formats("md,docx")


@pytest.fixture
def table():
    return TableResult(
        name="t", kind="metrics", study="s", title="T", caption="", row_header="Row",
        columns=[Column("A|B", "value"), Column("Δ", "delta"), Column("CI", "interval"), Column("k", "count")],
        rows=[
            Row("x", [ValueStat(1.0, 0.5, 2), DeltaStat(0.5, 0.1, 0.9, 2, 2), Interval(10.0, 20.0, 50.0), Count(4)]),
            Row("y", [Missing("none"), Blank(), Missing("none"), Missing("none")], group="g"),
        ],
        notes=["a note with 100%"],
    )


def test_csv_columns_per_kind(table):
    frame = csv_frame(table)
    assert list(frame.columns) == ["Row", "A|B", "A|B n", "A|B std", "Δ", "Δ ci_low", "Δ ci_high", "CI low",
                                   "CI high", "k"]
    back = pd.read_csv(io.StringIO(to_csv(table)))
    assert back.iloc[0].tolist()[1:] == [1.0, 2, 0.5, 0.5, 0.1, 0.9, 10.0, 20.0, 4]
    assert back.iloc[1, 1:].isna().all()


def test_all_formats_agree_on_the_cells(table):
    md_header, md_rows = parse_markdown(to_markdown(table))
    html_header, html_rows = parse_html(to_html(table))
    tex_header, tex_rows = parse_latex(to_latex(table))
    assert md_header == ["Row", "A\\|B", "Δ", "CI", "k", "n"]
    assert html_header == ["Row", "A|B", "Δ", "CI", "k", "n"]
    assert tex_header == ["Row", "A|B", r"$\Delta$", "CI", "k", "$n$"]
    expected = [["x", "1.00 ± 0.50", "+0.50 [+0.10, +0.90]", "[10.00, 20.00]", "4", "2"],
                ["y", "—", "", "—", "—", "0"]]
    assert html_rows == expected
    assert md_rows == expected
    assert tex_rows == [["x", r"1.00 $\pm$ 0.50", "+0.50 [+0.10, +0.90]", "[10.00, 20.00]", "4", "2"],
                        ["y", "---", "", "---", "---", "0"]]
    tex = to_latex(table)
    assert "\\midrule\ny &" in tex  # a new row group starts with a rule
    assert "a note with 100\\%" in tex and "\\usepackage{booktabs}" in tex
    assert 'class="missing"' in to_html(table)
    assert math.isnan(csv_frame(table).loc[1, "Δ"])
