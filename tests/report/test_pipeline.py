"""The three paper metric tables regenerated from runs logged with the MLflow client, checked in all four formats.

Per-seed values are chosen here; every mean, std, n, delta, CI bound, label and the row order is checked against
numbers computed in this file (statistics / scipy's paired t-test: the studies' deltas are paired by seed), in md,
tex, html and csv.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from tests.report.helpers import (
    DASH,
    delta_text,
    in_format,
    mean_std,
    pct,
    read_rendered,
    value_text,
    paired,
)
from tvrl_bench.report import regenerate

FORMATS = ("md", "tex", "html")
# The paper's sampler and reward tables in their column layouts, read on eval/* (the shipped ones differ): the
# engine's every number and label is checked on them.
ENGINE_TABLES = Path(__file__).parent / "table_definitions"
CRITIC_CELL_MISSING = {"md": "—", "tex": "---", "html": "—"}
VBENCH = ["creativity", "commonsense", "controllability", "human_fidelity", "physics"]
VBENCH_LABELS = ["Creativity", "Common sense", "Control", "Human", "Physics"]

# (reward, method) -> {seed: eval/overall}; seed 3 of qwen TVRL is logged by hand (no tags, no parent).
REWARDS = {
    ("videoalign", "base"): {0: 0.401, 1: 0.423, 2: 0.467},
    ("videoalign", "GRPO"): {0: 0.502, 1: 0.531, 2: 0.548},
    ("videoalign", "TVRL"): {0: 0.563, 1: 0.587, 2: 0.611},
    ("unifiedreward2", "GRPO"): {0: 0.452, 1: 0.466},
    ("qwen3_5_9b", "GRPO"): {0: 0.522, 1: 0.503, 2: 0.517},
    ("qwen3_5_9b", "TVRL"): {0: 0.534, 1: 0.491, 2: 0.528, 3: 0.551},
}


def by_seed(values: dict[int, float]) -> dict[int, float]:
    """{seed: value ×100}."""
    return {seed: 100.0 * v for seed, v in values.items()}


def category_value(overall: float, k: int, seed: int) -> float:
    return overall * (0.8 + 0.07 * k) + 0.003 * seed * (k + 1)


def rewards_metrics(overall: float, seed: int) -> dict[str, float]:
    metrics = {"eval/overall": overall, "eval/dim/subject_consistency": 0.9}
    metrics.update({f"eval/{c}": category_value(overall, k, seed) for k, c in enumerate(VBENCH)})
    return metrics


def params(**kw):
    base = {"policy": "toy", "sampler": "sage", "reward": "videoalign", "credit": "uniform", "objective": "grpo", "method": "GRPO",
            "lr": "1e-4"}
    base.update({k: str(v) for k, v in kw.items()})
    return base


@pytest.fixture(scope="module")
def rewards_study(new_study, mlflow_store, tmp_path_factory):
    study = new_study("rewards", tables="rewards")
    for (reward, method), seeds in REWARDS.items():
        credit = "window3" if method == "TVRL" else "uniform"
        for seed, overall in seeds.items():
            p = params(reward=reward, method=method, credit=credit, seed=seed)
            if (reward, method, seed) == ("qwen3_5_9b", "TVRL", 3):
                study.trial(p, rewards_metrics(overall, seed), by_hand=True)
            elif (reward, method, seed) == ("videoalign", "GRPO", 0):
                # an earlier finished attempt of the same trial, superseded by the retry
                study.trial(p, rewards_metrics(0.10, seed), trial_key="va-grpo-0", attempt=0)
                study.trial(p, rewards_metrics(overall, seed), trial_key="va-grpo-0", attempt=1)
            else:
                study.trial(p, rewards_metrics(overall, seed))
    # runs that did not finish: never in a table, counted
    study.trial(params(method="TVRL", credit="window3", seed=3), rewards_metrics(0.99, 3), status="FAILED")
    study.trial(params(method="GRPO", seed=4), {}, status="RUNNING")
    study.trial(params(reward="qwen3_5_9b", method="TVRL", credit="window3", seed=5), rewards_metrics(0.01, 5),
                status="KILLED")
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=out, plots=False, table_dirs=[ENGINE_TABLES])
    return study, summary, out / study.study


def expected_rewards_rows() -> list[tuple[str, dict | None, tuple | None]]:
    """(label, {seed: overall} or None when missing, (reward) for a delta row)."""
    labels = {"videoalign": "VideoAlign", "unifiedreward2": "UnifiedReward2", "qwen3_5_9b": "Qwen3.5-9B"}
    rows = [("Base model", REWARDS[("videoalign", "base")], None)]
    for reward in ("videoalign", "unifiedreward2", "qwen3_5_9b"):
        rows.append((f"{labels[reward]} GRPO", REWARDS.get((reward, "GRPO")), None))
        rows.append((f"{labels[reward]} TVRL", REWARDS.get((reward, "TVRL")), reward))
    return rows


def test_rewards_summary_counts_finished_excluded_and_superseded(rewards_study):
    study, summary, folder = rewards_study
    assert list(summary["tables"]) == ["rewards"]  # the parent's tvrl.tables tag picks the tables
    finished = sum(len(s) for s in REWARDS.values())
    assert summary["runs"] == {"finished": finished, "excluded": {"FAILED": 1, "KILLED": 1, "RUNNING": 1},
                               "superseded": 1}
    md = (folder / "rewards.md").read_text()
    assert "3 trial runs not FINISHED and left out (FAILED 1, KILLED 1, RUNNING 1)" in md
    assert "1 earlier finished attempt of retried trials superseded" in md
    warnings = summary["tables"]["rewards"]["warnings"]
    assert len(warnings) == 1 and "UnifiedReward2 TVRL" in warnings[0] and "no finished runs" in warnings[0]


@pytest.mark.parametrize("fmt", FORMATS)
def test_rewards_table_every_number_and_label(rewards_study, fmt):
    _, _, folder = rewards_study
    header, rows = read_rendered(folder, "rewards", fmt)
    expected_header = ["Method", "Overall", "Δ"] + VBENCH_LABELS + ["n"]
    if fmt == "tex":
        expected_header = [in_format(h, fmt) for h in expected_header[:-1]] + ["$n$"]
    assert header == expected_header
    expected = expected_rewards_rows()
    assert [r[0] for r in rows] == [label for label, _, _ in expected]
    for row, (label, seeds, delta_of) in zip(rows, expected):
        if seeds is None:  # the missing cell: dashes, no crash
            assert row[1:] == [in_format(DASH, fmt)] * 7 + ["0"]
            continue
        overall = pct(list(seeds.values()))
        assert row[1] == in_format(value_text(overall), fmt)
        if delta_of is None:
            assert row[2] == ""
        else:
            assert row[2] == in_format(delta_text(by_seed(seeds), by_seed(REWARDS[(delta_of, "GRPO")])), fmt)
        for k in range(5):
            cat = pct([category_value(v, k, s) for s, v in seeds.items()])
            assert row[3 + k] == in_format(value_text(cat), fmt)
        assert row[-1] == str(len(seeds))


def test_rewards_csv_full_precision(rewards_study):
    _, _, folder = rewards_study
    frame = pd.read_csv(folder / "rewards.csv")
    expected_columns = ["Method", "Overall", "Overall n", "Overall std", "Δ", "Δ ci_low", "Δ ci_high"]
    for label in VBENCH_LABELS:
        expected_columns += [label, f"{label} n", f"{label} std"]
    assert list(frame.columns) == expected_columns
    for (_, row), (label, seeds, delta_of) in zip(frame.iterrows(), expected_rewards_rows()):
        assert row["Method"] == label
        if seeds is None:
            assert row[1:].isna().all()
            continue
        overall = pct(list(seeds.values()))
        m, s = mean_std(overall)
        assert row["Overall"] == pytest.approx(m, rel=1e-12)
        assert row["Overall std"] == pytest.approx(s, rel=1e-9)
        assert row["Overall n"] == len(seeds)
        if delta_of is None:
            assert math.isnan(row["Δ"]) and math.isnan(row["Δ ci_low"])
        else:
            d, lo, hi = paired(by_seed(seeds), by_seed(REWARDS[(delta_of, "GRPO")]))
            assert (row["Δ"], row["Δ ci_low"], row["Δ ci_high"]) == (
                pytest.approx(d, rel=1e-9), pytest.approx(lo, rel=1e-9), pytest.approx(hi, rel=1e-9))
        for k, label_k in enumerate(VBENCH_LABELS):
            m_k, s_k = mean_std(pct([category_value(v, k, s) for s, v in seeds.items()]))
            assert row[label_k] == pytest.approx(m_k, rel=1e-12)
            assert row[f"{label_k} std"] == pytest.approx(s_k, rel=1e-9)


def test_rewards_marks_deltas_whose_ci_includes_zero(rewards_study):
    _, _, folder = rewards_study
    _, rows = read_rendered(folder, "rewards", "md")
    by_label = {r[0]: r for r in rows}
    assert not by_label["VideoAlign TVRL"][2].endswith("†")  # a clear gain
    assert by_label["Qwen3.5-9B TVRL"][2].endswith("†")  # within seed noise


def test_report_files_logged_to_parent_run(rewards_study, mlflow_store):
    study, summary, folder = rewards_study
    client = mlflow_store[1]
    assert summary["logged"] and summary["parent_run_id"] == study.parent_id
    logged = sorted(f.path for f in client.list_artifacts(study.parent_id, "reports"))
    page = ["reports/index.html", "reports/page_hacking.csv", "reports/page_improvement.csv", "reports/page_iqm.csv"]
    assert logged == sorted([f"reports/rewards.{fmt}" for fmt in ("md", "tex", "csv", "html")] + page)
    local = client.download_artifacts(study.parent_id, "reports/rewards.csv")
    assert open(local).read() == (folder / "rewards.csv").read_text()


# ---- samplers ------------------------------------------------------------------------------------------------------

SAMPLERS = {
    "flow": {"GRPO": [0.481, 0.502, 0.494], "TVRL": [0.517, 0.529, 0.541]},
    "sage": {"GRPO": [0.511, 0.498, 0.523], "TVRL": [0.556, 0.571, 0.549]},
    "dance": {"GRPO": [0.462, 0.475, 0.458], "TVRL": [0.471, 0.466]},
    "cps": {"GRPO": [0.413]},
}


@pytest.fixture(scope="module")
def samplers_study(new_study, mlflow_store, tmp_path_factory):
    study = new_study("samplers")
    for sampler, methods in SAMPLERS.items():
        for method, values in methods.items():
            for seed, v in enumerate(values):
                credit = "window3" if method == "TVRL" else "uniform"
                study.trial(params(sampler=sampler, method=method, credit=credit, seed=seed),
                            {"eval/overall": v, "eval/object": v + 0.1})
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=out, plots=False,
                         formats="md,tex,csv,html", table_dirs=[ENGINE_TABLES])
    return summary, out / study.study


def test_without_tag_every_table_whose_params_exist_is_rendered(samplers_study):
    summary, folder = samplers_study
    # The runs carry an objective, so the tables by objective render too.
    assert sorted(summary["tables"]) == ["credit", "objectives", "per_check", "power", "power_v1", "quickstart",
                                         "rewards", "samplers", "toy_v2"]
    no_judgments = f"no judgments for study '{folder.name}'"
    assert summary["skipped"] == {"winrate": no_judgments, "winrate_wide_oracle": no_judgments,
                                  "winrate_wide_vivid": no_judgments,
                                  "rewards_combined": "no cell has data",  # only the rewards study's critics
                                  "vivid_dose": "no cell has data"}  # only the dose study's vivid critics
    for table in summary["tables"]:
        for fmt in ("md", "tex", "csv", "html"):
            assert (folder / f"{table}.{fmt}").is_file()


@pytest.mark.parametrize("fmt", FORMATS)
def test_samplers_table_every_number_and_label(samplers_study, fmt):
    _, folder = samplers_study
    header, rows = read_rendered(folder, "samplers", fmt)
    assert header == ["Sampler", "GRPO", "TVRL", in_format("Δ", fmt), "$n$" if fmt == "tex" else "n"]
    assert [r[0] for r in rows] == ["SAGE", "Flow", "Dance", "CPS"]
    for row, sampler in zip(rows, ["sage", "flow", "dance"]):
        grpo, tvrl = pct(SAMPLERS[sampler]["GRPO"]), pct(SAMPLERS[sampler]["TVRL"])
        assert row[1] == in_format(value_text(grpo), fmt)
        assert row[2] == in_format(value_text(tvrl), fmt)
        assert row[3] == in_format(delta_text(dict(enumerate(tvrl)), dict(enumerate(grpo))), fmt)
    assert rows[2][4] == in_format("2–3", fmt)  # Dance: 3 GRPO seeds, 2 TVRL seeds
    assert rows[0][4] == "3"
    # CPS: one GRPO seed (no std), no TVRL runs: dashes, and no delta
    assert rows[3][1:] == ["41.30", in_format(DASH, fmt), in_format(DASH, fmt), "1"]


def test_samplers_csv(samplers_study):
    _, folder = samplers_study
    frame = pd.read_csv(folder / "samplers.csv").set_index("Sampler")
    assert list(frame.columns) == ["GRPO", "GRPO n", "GRPO std", "TVRL", "TVRL n", "TVRL std", "Δ", "Δ ci_low",
                                   "Δ ci_high"]
    for sampler, label in [("sage", "SAGE"), ("flow", "Flow"), ("dance", "Dance")]:
        grpo, tvrl = pct(SAMPLERS[sampler]["GRPO"]), pct(SAMPLERS[sampler]["TVRL"])
        row = frame.loc[label]
        assert row["GRPO"] == pytest.approx(mean_std(grpo)[0], rel=1e-12)
        assert row["TVRL std"] == pytest.approx(mean_std(tvrl)[1], rel=1e-9)
        assert row["TVRL n"] == len(tvrl)
        d, lo, hi = paired(dict(enumerate(tvrl)), dict(enumerate(grpo)))
        assert [row["Δ"], row["Δ ci_low"], row["Δ ci_high"]] == pytest.approx([d, lo, hi], rel=1e-9)
    cps = frame.loc["CPS"]
    assert cps["GRPO"] == pytest.approx(41.3) and cps["GRPO n"] == 1 and math.isnan(cps["GRPO std"])
    assert math.isnan(cps["TVRL"]) and math.isnan(cps["Δ"])


# ---- credit --------------------------------------------------------------------------------------------------------

CREDIT = {
    "dinov2": [0.512, 0.497, 0.520],
    "frame": [0.523, 0.534, 0.519],
    "shuffled3": [0.505, 0.521, 0.499],
    "uniform": [0.501, 0.514, 0.508],
    "window1": [0.533, 0.519, 0.547],
    "window3": [0.562, 0.571, 0.555],
    "window7": [0.541, 0.552, 0.538],
}
CREDIT_LABELS = [
    ("uniform", "Uniform (GRPO)"), ("frame", "Frame-level"), ("window7", "7×7 window"),
    ("window3", "3×3 window (default)"), ("window1", "1×1 unsmoothed"), ("shuffled3", "3×3 shuffled"),
    ("dinov2", "DINOv2 feature map"),
]


@pytest.fixture(scope="module")
def credit_study(new_study, mlflow_store, tmp_path_factory):
    study = new_study("credit")
    for credit, values in CREDIT.items():
        for seed, v in enumerate(values):
            method = "GRPO" if credit == "uniform" else "TVRL"
            study.trial(params(credit=credit, method=method, seed=seed), {"eval/overall": v})
    # a base run carries credit=uniform too; the credit table's where (method GRPO or TVRL) leaves it out
    study.trial(params(credit="uniform", method="base", seed=0), {"eval/overall": 0.2})
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=out, tables=["credit"], plots=False)
    return out / study.study


@pytest.mark.parametrize("fmt", FORMATS)
def test_credit_table_every_number_and_label(credit_study, fmt):
    header, rows = read_rendered(credit_study, "credit", fmt)
    # The critic's own score is a column of its own; these runs logged none, so its cells read as missing.
    assert header == ["Credit", "Overall", in_format("Δ vs uniform", fmt), "Critic reward", "$n$" if fmt == "tex" else "n"]
    assert [r[0] for r in rows] == [in_format(label, fmt) for _, label in CREDIT_LABELS]
    uniform = pct(CREDIT["uniform"])
    for row, (credit, _) in zip(rows, CREDIT_LABELS):
        values = pct(CREDIT[credit])
        assert row[1] == in_format(value_text(values), fmt)
        assert row[2] == ("" if credit == "uniform" else in_format(delta_text(dict(enumerate(values)), dict(enumerate(uniform))), fmt))
        assert row[3] == CRITIC_CELL_MISSING[fmt]
        assert row[4] == "3"


def test_credit_csv(credit_study):
    frame = pd.read_csv(credit_study / "credit.csv")
    assert frame["Credit"].tolist() == [label for _, label in CREDIT_LABELS]
    uniform = pct(CREDIT["uniform"])
    for (_, row), (credit, _) in zip(frame.iterrows(), CREDIT_LABELS):
        values = pct(CREDIT[credit])
        assert row["Overall"] == pytest.approx(mean_std(values)[0], rel=1e-12)
        assert row["Overall std"] == pytest.approx(mean_std(values)[1], rel=1e-9)
        if credit == "uniform":
            assert math.isnan(row["Δ vs uniform"])
        else:
            d, lo, hi = paired(dict(enumerate(values)), dict(enumerate(uniform)))
            assert [row["Δ vs uniform"], row["Δ vs uniform ci_low"], row["Δ vs uniform ci_high"]] == pytest.approx(
                [d, lo, hi], rel=1e-9)


def test_unknown_study_and_table_are_clear_errors(samplers_study, mlflow_store):
    from tvrl_bench.report.errors import ReportError

    _, folder = samplers_study
    with pytest.raises(ReportError, match="no MLflow experiment named 'samplerz'.*did you mean"):
        regenerate("samplerz", tracking_uri=mlflow_store[0], out_dir=folder.parent)
    with pytest.raises(ReportError, match="no table definition named 'sampler'.*did you mean 'samplers'"):
        regenerate(folder.name, tracking_uri=mlflow_store[0], out_dir=folder.parent, tables="sampler")
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        regenerate(folder.name, tracking_uri=mlflow_store[0], out_dir=folder.parent, formats="md,pdf")
