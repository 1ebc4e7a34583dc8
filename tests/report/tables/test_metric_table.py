"""Cells of runs: seeds as the sample unit, fixed rows, blank versus missing cells, pooling notes, user tables."""

from __future__ import annotations

import statistics

import pandas as pd
import pytest

from tests.report.helpers import delta_text, pct, read_rendered, value_text
from tvrl_bench.report import regenerate
from tvrl_bench.report.runs.study import split_runs
from tvrl_bench.report.stats import DeltaStat, ValueStat
from tvrl_bench.report.tables.definitions import load_table, parse_table_file
from tvrl_bench.report.tables.metric_table import build_metric_table
from tvrl_bench.report.tables.table_result import Blank, Missing


def runs_of(records):
    rows = []
    for i, r in enumerate(records):
        row = {"run_id": f"r{i}", "run_name": f"r{i}", "status": "FINISHED", "start_time": i, "end_time": i}
        row.update({f"params.{k}": str(v) for k, v in r.items() if not k.startswith("eval/")})
        row.update({f"metrics.{k}": v for k, v in r.items() if k.startswith("eval/")})
        rows.append(row)
    return split_runs(pd.DataFrame(rows), study="s")


def test_runs_of_one_seed_are_averaged_before_the_spread_over_seeds():
    runs = runs_of([
        # base runs logged once per reward model: seed 0 twice, seed 1 once
        {"reward": "a", "method": "base", "seed": 0, "eval/overall": 0.40},
        {"reward": "b", "method": "base", "seed": 0, "eval/overall": 0.44},
        {"reward": "a", "method": "base", "seed": 1, "eval/overall": 0.50},
        {"reward": "a", "method": "GRPO", "seed": 0, "eval/overall": 0.6},
    ])
    result = build_metric_table(load_table("rewards"), runs)
    base = result.rows[0]
    assert base.label == "Base model"
    stat = base.cells[0]
    assert isinstance(stat, ValueStat) and stat.n == 2
    assert stat.mean == pytest.approx(statistics.fmean([42.0, 50.0]))
    assert stat.std == pytest.approx(statistics.stdev([42.0, 50.0]))
    assert isinstance(base.cells[1], Blank)  # no delta on the base row
    labels = [r.label for r in result.rows]
    # base runs of reward b make no row of their own; the null control's fixed row stays, empty, when none ran
    assert labels == ["Base model", "Null control (oracle, 3×3 window)", "a GRPO", "a TVRL"]
    grpo, tvrl = result.rows[2], result.rows[3]
    assert isinstance(tvrl.cells[0], Missing) and isinstance(tvrl.cells[1], Missing)
    assert isinstance(grpo.cells[1], Blank)
    assert tvrl.n_label() == "0"
    assert any("Cells pool runs that differ in reward (a, b)" in n for n in result.notes)
    assert "table 'rewards': row 'a TVRL' (Overall, Δ TVRL − GRPO, Δ vs base, Critic reward): no finished runs with " \
           "reward=a, method=TVRL" in result.warnings


def test_missing_baseline_is_a_dash_with_the_reason():
    runs = runs_of([
        {"credit": "window3", "method": "TVRL", "seed": s, "eval/overall": v} for s, v in enumerate([0.5, 0.6])
    ])
    result = build_metric_table(load_table("credit"), runs)
    (row,) = result.rows
    assert isinstance(row.cells[0], ValueStat)
    assert isinstance(row.cells[1], Missing) and row.cells[1].reason.startswith("baseline: no finished runs")
    assert "credit=uniform" in result.warnings[0]


# The paper's sampler table as columns: GRPO and TVRL side by side and their paired difference (the shipped
# samplers.toml lists them as rows instead); the engine's column deltas are tested on it.
SAMPLER_COLUMNS = """
title = "Sampler"
row_header = "Sampler"

[rows]
by = ["sampler"]

[rows.params.sampler]
order = ["sage", "flow", "dance", "cps"]
labels = { sage = "SAGE", flow = "Flow", dance = "Dance", cps = "CPS" }

[[columns]]
label = "GRPO"
metric = "eval/overall"
where = { method = "GRPO" }

[[columns]]
label = "TVRL"
metric = "eval/overall"
where = { method = "TVRL" }

[[columns]]
label = "Δ"
delta = "eval/overall"
where = { method = "TVRL" }
baseline = { method = "GRPO" }
paired = true
"""


def sampler_columns(tmp_path, paired: bool = True):
    path = tmp_path / "sampler_columns.toml"
    path.write_text(SAMPLER_COLUMNS if paired else SAMPLER_COLUMNS.replace("paired = true", "paired = false"))
    return load_table(str(path))


def test_a_metric_absent_from_a_cell_is_missing_not_zero(tmp_path):
    runs = runs_of([
        {"sampler": "sage", "method": "GRPO", "seed": 0, "eval/overall": 0.5},
        {"sampler": "sage", "method": "TVRL", "seed": 0, "eval/other": 0.5},
    ])
    result = build_metric_table(sampler_columns(tmp_path), runs)
    grpo, tvrl, delta = result.rows[0].cells
    assert isinstance(grpo, ValueStat) and isinstance(tvrl, Missing) and "no metric 'eval/overall'" in tvrl.reason
    assert isinstance(delta, Missing)


USER_TABLE = """
title = "Physics by reward"
row_header = "Reward"
where = { method = "TVRL" }

[rows]
by = ["reward"]

[rows.params.reward]
order = ["videoalign"]
labels = { videoalign = "VideoAlign" }

[[columns]]
label = "Physics"
metric = "eval/physics"

[[columns]]
label = "Δ vs VideoAlign"
delta = "eval/physics"
baseline = { reward = "videoalign" }
"""


def test_a_user_table_renders_without_code(tmp_path, new_study, mlflow_store):
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "physics.toml").write_text(USER_TABLE)
    study = new_study("user_table")
    values = {"videoalign": [0.31, 0.35, 0.33], "qwen3_5_9b": [0.38, 0.41, 0.36]}
    for reward, vs in values.items():
        for seed, v in enumerate(vs):
            study.trial({"reward": reward, "method": "TVRL", "seed": seed}, {"eval/physics": v, "eval/overall": 0.5})
            study.trial({"reward": reward, "method": "GRPO", "seed": seed}, {"eval/physics": 0.0})
    study.finish()
    regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=tmp_path, tables="physics", table_dirs=[folder],
               plots=False, log_to_mlflow=False)
    header, rows = read_rendered(tmp_path / study.study, "physics", "md")
    assert header == ["Reward", "Physics", "Δ vs VideoAlign", "n"]
    va, qwen = pct(values["videoalign"]), pct(values["qwen3_5_9b"])
    assert rows == [
        ["VideoAlign", value_text(va), "", "3"],
        ["qwen3_5_9b", value_text(qwen), delta_text(qwen, va), "3"],
    ]


def test_table_file_given_as_a_path(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(USER_TABLE)
    assert load_table(str(path)).title == "Physics by reward"
    assert parse_table_file(path).name == "mine"


def test_paired_delta_uses_the_seeds_both_cells_have(tmp_path):
    runs = runs_of(
        [{"sampler": "flow", "method": "GRPO", "seed": s, "eval/overall": v} for s, v in enumerate([0.5, 0.52, 0.49])]
        + [{"sampler": "flow", "method": "TVRL", "seed": s, "eval/overall": v} for s, v in enumerate([0.55, 0.58])]
    )
    delta = build_metric_table(sampler_columns(tmp_path), runs).rows[0].cells[2]
    assert isinstance(delta, DeltaStat) and (delta.n_treated, delta.n_baseline) == (2, 2)
    assert delta.delta == pytest.approx(((55 - 50) + (58 - 52)) / 2)


def test_unpaired_delta_stats_carry_both_sample_sizes(tmp_path):
    runs = runs_of(
        [{"sampler": "flow", "method": "GRPO", "seed": s, "eval/overall": v} for s, v in enumerate([0.5, 0.52, 0.49])]
        + [{"sampler": "flow", "method": "TVRL", "seed": s, "eval/overall": v} for s, v in enumerate([0.55, 0.58])]
    )
    delta = build_metric_table(sampler_columns(tmp_path, paired=False), runs).rows[0].cells[2]
    assert isinstance(delta, DeltaStat) and (delta.n_treated, delta.n_baseline) == (2, 3)
