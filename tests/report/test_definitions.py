"""Table definitions: the four shipped TOML files, lookup order, and errors that name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tvrl_bench.config import PROJECT_ROOT
from tvrl_bench.report.definitions import (
    CategoryColumns,
    DeltaColumn,
    MetricTable,
    ValueColumn,
    WinrateTable,
    available_tables,
    load_table,
    natural_key,
    parse_table_file,
)
from tvrl_bench.report.runs import ReportError


def test_the_four_paper_tables_ship_as_definitions():
    tables = available_tables()
    for name in ("rewards", "samplers", "credit", "winrate"):
        assert tables[name] == PROJECT_ROOT / "reports" / "tables" / f"{name}.toml"
    rewards = load_table("rewards")
    assert isinstance(rewards, MetricTable)
    assert [a.name for a in rewards.rows_by] == ["reward", "method"]
    assert rewards.rows_by[1].values == ("GRPO", "TVRL")
    assert rewards.fixed_rows[0].label == "Base model" and rewards.fixed_rows[0].where == {"method": ("base",)}
    overall, delta, categories = rewards.columns
    assert isinstance(overall, ValueColumn) and overall.metric == "eval/overall"
    assert isinstance(delta, DeltaColumn) and delta.baseline == {"method": "GRPO"}
    assert isinstance(categories, CategoryColumns) and categories.include == "present"
    credit = load_table("credit")
    assert credit.where == {"method": ("GRPO", "TVRL")} and credit.heatmaps
    assert credit.rows_by[0].order[0] == "uniform"
    winrate = load_table("winrate")
    assert isinstance(winrate, WinrateTable) and winrate.method == "TVRL"
    assert set(load_table("samplers").required_params()) == {"sampler", "method"}


def test_categories_present_in_a_stable_order():
    cols = load_table("rewards").columns[2]
    vbench = ["eval/physics", "eval/creativity", "eval/dim/subject_consistency", "eval/overall", "eval/commonsense"]
    assert [(c.label, c.metric) for c in cols.expand(vbench)] == [
        ("Creativity", "eval/creativity"), ("Common sense", "eval/commonsense"), ("Physics", "eval/physics")]
    toy = ["eval/object", "eval/motion", "eval/background", "eval/attribute", "eval/overall", "train/loss"]
    assert [c.label for c in cols.expand(toy)] == ["Attribute", "Background", "Motion", "Object"]


def test_a_users_table_folder_comes_first(tmp_path):
    (tmp_path / "credit.toml").write_text('title = "Mine"\n[rows]\nby = ["credit"]\n[[columns]]\nmetric = "eval/x"\n')
    (tmp_path / "extra.toml").write_text('[rows]\nby = ["reward"]\n[[columns]]\nmetric = "eval/overall"\n')
    tables = available_tables([tmp_path])
    assert tables["credit"] == (tmp_path / "credit.toml").resolve() and "extra" in tables and "rewards" in tables
    assert load_table("credit", [tmp_path]).title == "Mine"
    assert load_table("extra", [tmp_path]).columns[0].label == "eval/overall"


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
    ],
)
def test_definition_errors_name_the_file_and_the_key(tmp_path, text, message):
    with pytest.raises(ReportError, match=message):
        parse_table_file(write(tmp_path, text))


def test_unknown_table_name_suggests():
    with pytest.raises(ReportError, match="no table definition named 'credits'; did you mean 'credit'"):
        load_table("credits")


def test_natural_order_of_values():
    assert sorted(["10", "2", "window7", "window10", "window3", "1"], key=natural_key) == [
        "1", "2", "10", "window3", "window7", "window10"]
