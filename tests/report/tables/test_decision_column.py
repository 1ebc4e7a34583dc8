"""The decision column and the decisions panel: a staged study's decisions recomputed from its runs alone (the
parent run's tvrl.decide and each trial's params and metric), equal to the test run on the same values directly."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tvrl_bench.decisions.design import StagedDesign
from tvrl_bench.decisions.sequential import Comparison, staged_test
from tvrl_bench.report.render.csv import csv_frame
from tvrl_bench.report.runs.decisions import study_decisions
from tvrl_bench.report.runs.study import split_runs
from tvrl_bench.report.study_page.decisions import decisions_section
from tvrl_bench.report.tables.definitions import load_table
from tvrl_bench.report.tables.metric_table import build_metric_table
from tvrl_bench.report.tables.table_result import Text

ARMS = [(("objective", "tvrl_question"), ("sampler", s), ("credit", c)) for s in ("sage", "flow")
        for c in ("uniform", "window3")]
DESIGN = StagedDesign({"credit": "uniform"}, seeds_per_stage=5, max_stages=2, margin=3.0, seeds=tuple(range(10)))


def values(sampler: str, credit: str) -> list[float]:
    rng = np.random.default_rng(sum(map(ord, sampler + credit)))
    lift = 0.25 if (sampler, credit) == ("sage", "window3") else 0.0
    return list(0.6 + lift + rng.normal(0, 0.02, 5))


def study(staged: bool = True):
    parent = {"run_id": "p", "run_name": "samplers", "status": "FINISHED", "start_time": 0, "end_time": 0,
              "tags.tvrl.role": "study", "tags.tvrl.study": "samplers"}
    if staged:
        parent["tags.tvrl.decide"] = DESIGN.fingerprint(ARMS)
    rows = [parent]
    for (_, (_, sampler), (_, credit)) in ARMS:
        for seed, value in enumerate(values(sampler, credit)):
            rows.append({"run_id": f"{sampler}-{credit}-{seed}", "run_name": "r", "status": "FINISHED",
                         "start_time": 1, "end_time": 1, "tags.tvrl.role": "trial", "tags.mlflow.parentRunId": "p",
                         "params.objective": "tvrl_question", "params.sampler": sampler, "params.credit": credit,
                         "params.method": "GRPO" if credit == "uniform" else "TVRL", "params.seed": str(seed),
                         "metrics.wide_eval/overall": value})
    return split_runs(pd.DataFrame(rows), study="samplers")


def test_decisions_from_the_runs_alone_equal_the_test_on_the_same_values():
    decisions = study_decisions(study())
    assert decisions is not None and decisions.axes == ("objective", "sampler", "credit")
    expected = staged_test(
        {f"objective=tvrl_question sampler={s} credit={c}": [[100 * v for v in values(s, c)]]
         for s in ("sage", "flow") for c in ("uniform", "window3")},
        [Comparison(f"objective=tvrl_question sampler={s} credit=window3",
                    f"objective=tvrl_question sampler={s} credit=uniform") for s in ("sage", "flow")],
        0.05, 2, 3.0)
    got = {v.comparison: (v.verdict, round(v.difference, 9)) for v in decisions.results[-1].verdicts}
    assert got == {v.comparison: (v.verdict, round(v.difference, 9)) for v in expected[-1].verdicts}
    assert decisions.text("objective=tvrl_question sampler=sage credit=window3") == "larger, stage 1"
    assert decisions.text("objective=tvrl_question sampler=flow credit=window3") == "open, stage 1"
    assert decisions.text("objective=tvrl_question sampler=flow credit=uniform") == "baseline"


def test_the_samplers_table_shows_each_samplers_decision_beside_its_delta_and_in_its_csv():
    result = build_metric_table(load_table("samplers"), study())
    labels = [c.label for c in result.columns]
    assert labels[:4] == ["GRPO", "TVRL", "Δ TVRL − GRPO", "Decision"]
    rows = {r.label: r for r in result.rows}
    assert rows["SAGE"].cells[3] == Text("larger, stage 1") and rows["Flow"].cells[3] == Text("open, stage 1")
    assert any(n.startswith("Decision: the staged decision on wide_eval/overall") for n in result.notes)
    frame = csv_frame(result)
    assert list(frame.loc[frame["Sampler"] == "SAGE", "Decision"]) == ["larger, stage 1"]


def test_a_study_without_staged_decisions_has_no_decision_column():
    result = build_metric_table(load_table("samplers"), study(staged=False))
    assert "Decision" not in [c.label for c in result.columns]
    assert not any("staged decision" in n for n in result.notes)


def test_the_page_panel_lists_each_comparison_and_the_trials_saved():
    html = "\n".join(decisions_section(study_decisions(study()), finished_trials=20, base_rows=False))
    assert 'id="decisions-table"' in html and html.count('<tr data-verdict=') == 2
    assert 'data-verdict="larger"' in html and 'data-verdict="open"' in html
    assert "Trials: 20 run of at most 40 (a grid of 2 stages): 20 saved." in html
