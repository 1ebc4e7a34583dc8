"""Table definitions: the four shipped TOML files, lookup order, and an unknown name's suggestion."""

from __future__ import annotations

import pytest

from tvrl_bench.config import PROJECT_ROOT
from tvrl_bench.report.errors import ReportError
from tvrl_bench.report.tables.definition_types import (CategoryColumns, DeltaColumn, MetricTable, ValueColumn,
                                                       WinrateTable)
from tvrl_bench.report.tables.definitions import available_tables, load_table


def test_the_four_paper_tables_ship_as_definitions():
    tables = available_tables()
    for name in ("rewards", "samplers", "credit", "winrate"):
        assert tables[name] == PROJECT_ROOT / "reports" / "tables" / f"{name}.toml"
    rewards = load_table("rewards")
    assert isinstance(rewards, MetricTable)
    assert [a.name for a in rewards.rows_by] == ["reward", "method"]
    assert rewards.rows_by[1].values == ("GRPO", "TVRL")
    assert rewards.fixed_rows[0].label == "Base model" and rewards.fixed_rows[0].where == {"method": ("base",)}
    overall, delta, over_base, over_oracle, critic, categories = rewards.columns
    assert isinstance(over_oracle, DeltaColumn) and over_oracle.optional
    assert over_oracle.baseline == {"reward": "toy_oracle", "objective": "*"}
    assert isinstance(overall, ValueColumn) and overall.metric == "wide_eval/overall"
    assert isinstance(delta, DeltaColumn) and delta.baseline == {"method": "GRPO", "credit": "*"} and delta.paired
    assert isinstance(over_base, DeltaColumn) and over_base.baseline["method"] == "base"
    assert isinstance(critic, ValueColumn) and critic.metric == "wide_eval/critic_reward"
    assert isinstance(categories, CategoryColumns) and categories.include == "present" and categories.prefix == "wide_eval/"
    combined = load_table("rewards_combined")  # the combination against each of its parts alone
    assert combined.where["reward"] == ("toy_qwen_slots", "toy_qwen_slots_shortcut", "combined_qwen_shortcut")
    assert combined.columns[1].baseline == {"reward": "combined_qwen_shortcut"} and combined.columns[1].paired
    dose = load_table("vivid_dose")  # each vivid_bias setting's critic gain beside its evaluator gain
    assert dose.where["reward"] == ("toy_qwen_slots_vivid_b060", "toy_qwen_slots_vivid_b075", "toy_qwen_slots_vivid")
    assert [c.metric for c in dose.columns if isinstance(c, DeltaColumn)] == [
        "wide_eval/overall", "wide_eval/critic_reward", "wide_eval/critic_false_yes"]
    assert all(c.baseline["method"] == "base" and c.paired for c in dose.columns if isinstance(c, DeltaColumn))
    credit = load_table("credit")
    assert credit.where == {"method": ("GRPO", "TVRL")} and credit.heatmaps
    assert credit.rows_by[0].order[0] == "uniform"
    winrate = load_table("winrate")
    assert isinstance(winrate, WinrateTable) and winrate.method == "TVRL"
    assert set(load_table("samplers").required_params()) == {"sampler", "method"}


def test_a_users_table_folder_comes_first(tmp_path):
    (tmp_path / "credit.toml").write_text('title = "Mine"\n[rows]\nby = ["credit"]\n[[columns]]\nmetric = "eval/x"\n')
    (tmp_path / "extra.toml").write_text('[rows]\nby = ["reward"]\n[[columns]]\nmetric = "eval/overall"\n')
    tables = available_tables([tmp_path])
    assert tables["credit"] == (tmp_path / "credit.toml").resolve() and "extra" in tables and "rewards" in tables
    assert load_table("credit", [tmp_path]).title == "Mine"
    assert load_table("extra", [tmp_path]).columns[0].label == "eval/overall"


def test_unknown_table_name_suggests():
    with pytest.raises(ReportError, match="no table definition named 'credits'; did you mean 'credit'"):
        load_table("credits")
