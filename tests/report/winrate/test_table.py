"""The win-rate table: orientation to the table's method, every number in all four formats, all-tie rows."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest

from tests.report.helpers import PROMPTS, fixture_judgments, in_format, read_rendered
from tvrl_bench.report import regenerate
from tvrl_bench.report.stats import bootstrap_win_rate
from tvrl_bench.report.winrate.judgments import Judgment, JudgmentStore


@pytest.fixture(scope="module")
def winrate_report(new_study, mlflow_store, tmp_path_factory):
    study = new_study("winrate")
    study.trial({"policy": "toy", "sampler": "sage", "reward": "toy_oracle", "credit": "window3", "method": "TVRL",
                 "seed": "0"}, {"eval/overall": 0.5})
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    stored, truth = fixture_judgments(study.study)
    with JudgmentStore(out / "judgments.sqlite") as store:
        store.add(stored)
    summary = regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=out, tables="winrate", plots=False)
    return summary, out / study.study, truth


def expected_rows(truth):
    """Independent numbers of the two rows: (label, W%, L%, T%, rate%, std%, seeds, ci_lo%, ci_hi%, n)."""
    w = sum(v == "w" for _, _, v in truth)
    lost = sum(v == "l" for _, _, v in truth)
    t = sum(v == "t" for _, _, v in truth)
    n = len(truth)
    per_seed = []
    for seed in ("0", "1", "2"):
        ws = sum(v == "w" for _, s, v in truth if s == seed)
        ls = sum(v == "l" for _, s, v in truth if s == seed)
        per_seed.append(100 * ws / (ws + ls))
    prompt_w = np.array([sum(v == "w" for p, _, v in truth if p == q) for q in PROMPTS])
    prompt_l = np.array([sum(v == "l" for p, _, v in truth if p == q) for q in PROMPTS])
    lo, hi, method = bootstrap_win_rate(prompt_w, prompt_l)
    assert method == "bootstrap"
    grpo = ("TVRL vs GRPO", 100 * w / n, 100 * lost / n, 100 * t / n, 100 * w / (w + lost),
            statistics.stdev(per_seed), 3, 100 * lo, 100 * hi, n)
    base = ("TVRL vs Base model", 100.0, 0.0, 0.0, 100.0, 0.0, 2, 100 * 0.025 ** (1 / 8), 100.0, 8)
    return [grpo, base]


@pytest.mark.parametrize("fmt", ["md", "tex", "html"])
def test_winrate_table_every_number(winrate_report, fmt):
    _, folder, truth = winrate_report
    header, rows = read_rendered(folder, "winrate", fmt)
    n = "$n$" if fmt == "tex" else "n"
    assert header == ["Comparison", "Win", "Loss", "Tie", "Win rate (excl. ties)", in_format("95% CI", fmt), n]
    expected = expected_rows(truth)
    assert [r[0] for r in rows] == [e[0] for e in expected]
    for row, (label, w, lost, t, rate, std, _, lo, hi, n) in zip(rows, expected):
        assert row[1:4] == [f"{w:.2f}", f"{lost:.2f}", f"{t:.2f}"]
        assert row[4] == in_format(f"{rate:.2f} ± {std:.2f}", fmt)
        mark = "†" if lo <= 50 <= hi else ""
        assert row[5] == in_format(f"[{lo:.2f}, {hi:.2f}]{mark}", fmt)
        assert row[6] == str(n)


def test_winrate_csv_and_notes(winrate_report):
    summary, folder, truth = winrate_report
    frame = pd.read_csv(folder / "winrate.csv")
    assert list(frame.columns) == ["Comparison", "Win", "Loss", "Tie", "Win rate (excl. ties)",
                                   "Win rate (excl. ties) n", "Win rate (excl. ties) std", "95% CI low",
                                   "95% CI high", "n"]
    for (_, row), (label, w, lost, t, rate, std, seeds, lo, hi, n) in zip(frame.iterrows(), expected_rows(truth)):
        assert row["Comparison"] == label
        assert [row["Win"], row["Loss"], row["Tie"]] == pytest.approx([w, lost, t], rel=1e-12)
        assert row["Win rate (excl. ties)"] == pytest.approx(rate, rel=1e-12)
        assert row["Win rate (excl. ties) std"] == pytest.approx(std, rel=1e-9, abs=1e-12)
        assert row["Win rate (excl. ties) n"] == seeds
        assert [row["95% CI low"], row["95% CI high"]] == pytest.approx([lo, hi], rel=1e-9)
        assert row["n"] == n
    md = (folder / "winrate.md").read_text()
    assert "1 judgments not involving TVRL are not shown." in md
    assert summary["tables"]["winrate"]["warnings"] == []


def test_winrate_all_ties_and_missing_opponent_do_not_crash(tmp_path, new_study, mlflow_store):
    study = new_study("ties")
    study.trial({"method": "TVRL", "seed": "0"}, {"eval/overall": 0.5})
    with JudgmentStore(tmp_path / "judgments.sqlite") as store:
        store.add([Judgment(study.study, "p", "0", "TVRL", "GRPO", "GRPO", "j", "tie")])
    summary = regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=tmp_path, tables="winrate", plots=False)
    _, rows = read_rendered(tmp_path / study.study, "winrate", "md")
    assert rows[0] == ["TVRL vs GRPO", "0.00", "0.00", "100.00", "—", "—", "1"]
    assert any("every judgment is a tie" in w for w in summary["tables"]["winrate"]["warnings"])
    frame = pd.read_csv(tmp_path / study.study / "winrate.csv")
    assert math.isnan(frame.loc[0, "Win rate (excl. ties)"])
