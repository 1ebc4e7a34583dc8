"""Win-rate studies: the judgment store, CSV import, orientation, and the winrate table in all four formats."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest

from tests.report.helpers import in_format, read_rendered
from tvrl_bench.report import regenerate
from tvrl_bench.report.runs import ReportError
from tvrl_bench.report.stats import bootstrap_win_rate
from tvrl_bench.report.winrate import Judgment, JudgmentStore, read_judgments_csv, verdict_from_choice

PATTERN = "wwlwtwwlwwtlwwwlwtwwlwww"  # TVRL's verdicts against GRPO, one per (prompt, seed, judge)
PROMPTS = [f"a red circle moving left {i}" for i in range(4)]
JUDGES = ["human:alice", "human:bob"]


def fixture_judgments(study: str) -> tuple[list[Judgment], list[tuple[str, str, str]]]:
    """Stored judgments (half of them with GRPO as method A) and the (prompt, seed, TVRL verdict) truth."""
    stored, truth = [], []
    flip = {"w": "loss", "l": "win", "t": "tie"}
    plain = {"w": "win", "l": "loss", "t": "tie"}
    i = 0
    for p in PROMPTS:
        for seed in range(3):
            for judge in JUDGES:
                v = PATTERN[i]
                truth.append((p, str(seed), v))
                if i % 2:
                    stored.append(Judgment(study, p, str(seed), "GRPO", "TVRL", "TVRL", judge, flip[v]))
                else:
                    stored.append(Judgment(study, p, str(seed), "TVRL", "GRPO", "GRPO", judge, plain[v]))
                i += 1
    for k, p in enumerate(PROMPTS):  # TVRL beats the base model every time
        for seed in range(2):
            if k % 2:
                stored.append(Judgment(study, p, str(seed), "base", "TVRL", "base", "human:alice", "loss"))
            else:
                stored.append(Judgment(study, p, str(seed), "TVRL", "base", "base", "human:alice", "win"))
    stored.append(Judgment(study, PROMPTS[0], "0", "GRPO", "base", "GRPO", "human:alice", "win"))
    stored.append(Judgment("other_study", PROMPTS[0], "0", "TVRL", "GRPO", "GRPO", "human:alice", "loss"))
    return stored, truth


def test_judgment_validation_and_verdicts():
    with pytest.raises(ValueError, match="verdict 'draw' is not one of win, loss, tie"):
        Judgment("s", "p", "0", "TVRL", "GRPO", "TVRL", "j", "draw")
    with pytest.raises(ValueError, match="left 'base' must name the method shown on the left"):
        Judgment("s", "p", "0", "TVRL", "GRPO", "base", "j", "win")
    j = Judgment("s", "p", "0", "TVRL", "GRPO", "TVRL", "j", "win", run_a="ra", run_b="rb")
    f = j.flipped()
    assert (f.method_a, f.method_b, f.verdict, f.left, f.run_a) == ("GRPO", "TVRL", "loss", "TVRL", "rb")
    # the judge said which side was better; the verdict depends on which method was on that side
    assert verdict_from_choice("left", left="TVRL", method_a="TVRL") == "win"
    assert verdict_from_choice("left", left="GRPO", method_a="TVRL") == "loss"
    assert verdict_from_choice("right", left="GRPO", method_a="TVRL") == "win"
    assert verdict_from_choice("tie", left="GRPO", method_a="TVRL") == "tie"
    with pytest.raises(ValueError, match="left, right, tie"):
        verdict_from_choice("A", left="GRPO", method_a="TVRL")


def test_store_round_trip_and_a_judge_rejudging_replaces(tmp_path):
    with JudgmentStore(tmp_path / "j.sqlite") as store:
        stored, _ = fixture_judgments("s1")
        assert store.add(stored) == len(stored)
        assert store.studies() == ["other_study", "s1"]
        frame = store.frame("s1")
        assert len(frame) == len(stored) - 1
        assert list(frame.columns[:8]) == ["study", "prompt", "seed", "sample", "method_a", "method_b", "left", "judge"]
        again = Judgment("s1", PROMPTS[0], "0", "TVRL", "GRPO", "GRPO", "human:alice", "tie")
        store.add([again])
        after = store.frame("s1")
        assert len(after) == len(stored) - 1
        same = after[(after["prompt"] == PROMPTS[0]) & (after["seed"] == "0") & (after["judge"] == "human:alice")
                     & (after["method_a"] == "TVRL") & (after["method_b"] == "GRPO")]
        assert same["verdict"].tolist() == ["tie"]
        assert store.judgments("s1")[-1].verdict == "tie"


def test_csv_import_and_clear_errors(tmp_path):
    good = tmp_path / "judgments.csv"
    good.write_text(
        "prompt,seed,method_a,method_b,left,judge,verdict,notes\n"
        "a red circle,0,TVRL,GRPO,GRPO,human:alice,WIN,looks right\n"
        "a red circle,1,TVRL,GRPO,TVRL,human:alice,tie,\n"
    )
    judgments = read_judgments_csv(good, study="s")
    assert [(j.study, j.seed, j.verdict, j.left) for j in judgments] == [
        ("s", "0", "win", "GRPO"), ("s", "1", "tie", "TVRL")]
    with pytest.raises(ReportError, match=r"judgments.csv:1: missing column study"):
        read_judgments_csv(good)
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "study,prompt,seed,method_a,method_b,left,judge,verdict\n"
        "s,a red circle,0,TVRL,GRPO,GRPO,human:alice,win\n"
        "s,a red circle,1,TVRL,GRPO,GRPO,human:alice,draw\n"
    )
    with pytest.raises(ReportError, match=r"bad.csv:3: verdict 'draw' is not one of win, loss, tie"):
        read_judgments_csv(bad)
    bad.write_text("study,prompt,seed,method_a,method_b,left,judge,verdict\ns,p,0,TVRL,GRPO,left,j,win\n")
    with pytest.raises(ReportError, match=r"bad.csv:2: left 'left' must name the method shown on the left"):
        read_judgments_csv(bad)
    with JudgmentStore(tmp_path / "j.sqlite") as store:
        assert store.import_csv(good, study="s") == 2
        assert store.import_csv(good, study="s") == 2  # re-importing replaces, never double-counts
        assert len(store.frame("s")) == 2


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
