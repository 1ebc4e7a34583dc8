"""Paired deltas and the minimum detectable delta against a computation written here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tvrl_bench.report.stats import minimum_detectable_delta, paired_delta


def test_paired_delta_is_the_t_interval_of_per_seed_differences_on_shared_seeds():
    treated = {"0": 45.0, "1": 47.0, "2": 44.0, "3": 50.0, "9": 99.0}  # seed 9 has no baseline: left out
    baseline = {"0": 41.0, "1": 42.5, "2": 41.0, "3": 44.0, "7": 10.0}
    diffs = np.array([4.0, 4.5, 3.0, 6.0])
    half = stats.t.ppf(0.975, 3) * diffs.std(ddof=1) / math.sqrt(4)
    d = paired_delta(treated, baseline)
    assert d.delta == pytest.approx(diffs.mean()) and (d.n_treated, d.n_baseline) == (4, 4)
    assert (d.ci_low, d.ci_high) == pytest.approx((diffs.mean() - half, diffs.mean() + half))
    assert d.excludes_zero


def test_paired_delta_is_tighter_than_the_unpaired_one_when_seeds_share_their_noise():
    from tvrl_bench.report.stats import value_stat, welch_delta

    base = {str(i): v for i, v in enumerate([30.0, 40.0, 50.0, 35.0, 45.0])}  # seed-to-seed spread of 10 points
    trained = {k: v + 2.0 + (0.5 if int(k) % 2 else -0.5) for k, v in base.items()}
    paired = paired_delta(trained, base)
    unpaired = welch_delta(value_stat(list(trained.values())), value_stat(list(base.values())))
    assert paired.excludes_zero and not unpaired.excludes_zero
    assert paired.delta == pytest.approx(unpaired.delta)


def test_minimum_detectable_delta_against_the_textbook_formula():
    n, sd = 5, 2.0
    expected = (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * sd / math.sqrt(n)
    assert minimum_detectable_delta(sd, n) == pytest.approx(expected)
    assert math.isnan(minimum_detectable_delta(sd, 1))


OBJECTIVE_CREDIT = {"GRPO": ("grpo", "uniform"), "TVRL": ("grpo", "window3"), "null": ("null", "window3")}


def test_the_power_table_pairs_each_method_with_the_base_of_its_seed():
    import pandas as pd

    from tvrl_bench.report.tables.definitions import load_table
    from tvrl_bench.report.tables.metric_table import build_metric_table
    from tvrl_bench.report.runs.study import split_runs
    from tvrl_bench.report.stats import ValueStat
    from tvrl_bench.report.tables.table_result import Blank

    base = [0.40, 0.46, 0.43]
    gains = {"TVRL": [0.06, 0.05, 0.07], "GRPO": [0.04, 0.06, 0.03], "null": [-0.01, 0.01, -0.02]}
    rows = []
    for seed, b in enumerate(base):
        rows.append({"method": "base", "objective": "grpo", "credit": "window3", "seed": seed, "eval/overall": b})
        rows += [{"method": m, "objective": OBJECTIVE_CREDIT[m][0], "credit": OBJECTIVE_CREDIT[m][1], "seed": seed,
                  "eval/overall": b + g[seed]} for m, g in gains.items()]
    frame = pd.DataFrame([
        {"run_id": f"r{i}", "run_name": f"r{i}", "status": "FINISHED", "start_time": i, "end_time": i,
         **{f"params.{k}": str(v) for k, v in r.items() if k != "eval/overall"}, "metrics.eval/overall": r["eval/overall"]}
        for i, r in enumerate(rows)
    ])
    result = build_metric_table(load_table("power"), split_runs(frame, study="power"))
    assert [r.label for r in result.rows][:4] == ["Base model", "GRPO (clipped ratio), uniform credit",
                                                  "GRPO (clipped ratio), TVRL 3×3 window credit",
                                                  "GRPO null control, TVRL 3×3 window credit"]
    # No run logged a wide evaluation: the table reads the trials' own evaluation, and says so.
    assert any("eval/*" in note for note in result.notes)
    assert isinstance(result.rows[0].cells[1], Blank) and isinstance(result.rows[0].cells[0], ValueStat)
    for row, method in zip(result.rows[1:4], ["GRPO", "TVRL", "null"]):
        diffs = np.array(gains[method]) * 100
        half = stats.t.ppf(0.975, 2) * diffs.std(ddof=1) / math.sqrt(3)
        d = row.cells[1]
        assert d.delta == pytest.approx(diffs.mean()) and (d.ci_low, d.ci_high) == pytest.approx((diffs.mean() - half, diffs.mean() + half))
    assert result.rows[2].cells[1].excludes_zero and not result.rows[3].cells[1].excludes_zero


def test_with_one_seed_the_power_table_pairs_the_prompts_of_its_wide_evaluation():
    import pandas as pd

    from tvrl_bench.report.tables.definitions import load_table
    from tvrl_bench.report.tables.metric_table import build_metric_table
    from tvrl_bench.report.runs.study import split_runs

    rng = np.random.default_rng(0)
    base = rng.uniform(0.3, 0.7, 40)
    trained = base + 0.05 + rng.normal(0, 0.02, 40)
    scores = {"b": base, "t": trained}
    runs = [("b", "base", "nft", "uniform"), ("t", "GRPO", "nft", "uniform")]
    frame = pd.DataFrame([
        {"run_id": rid, "run_name": rid, "status": "FINISHED", "start_time": i, "end_time": i, "params.seed": "0",
         "params.method": method, "params.objective": objective, "params.credit": credit,
         "metrics.wide_eval/overall": float(scores[rid].mean())}
        for i, (rid, method, objective, credit) in enumerate(runs)
    ])
    asked = []

    def prompt_scores(run_id, prefix):
        asked.append((run_id, prefix))
        return {(i, f"prompt {i}"): float(v) for i, v in enumerate(scores[run_id])}

    result = build_metric_table(load_table("power"), split_runs(frame, study="power"), prompt_scores=prompt_scores)
    d = result.rows[1].cells[1]
    diffs = (trained - base) * 100
    half = stats.t.ppf(0.975, 39) * diffs.std(ddof=1) / math.sqrt(40)
    assert d.delta == pytest.approx(diffs.mean()) and d.n_treated == 40
    assert (d.ci_low, d.ci_high) == pytest.approx((diffs.mean() - half, diffs.mean() + half))
    assert set(asked) == {("t", "wide_eval"), ("b", "wide_eval")}
    assert any("pairs the 40 prompts" in note for note in result.notes)
    # Without per-prompt scores the one-seed delta has no interval, as before.
    alone = build_metric_table(load_table("power"), split_runs(frame, study="power")).rows[1].cells[1]
    assert alone.delta == pytest.approx(diffs.mean(), abs=1e-9) and math.isnan(alone.ci_low)
