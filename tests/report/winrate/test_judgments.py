"""Judgments: validation and verdicts, the SQLite store (a judge re-judging replaces), CSV import and its errors."""

from __future__ import annotations

import pytest

from tests.report.helpers import PROMPTS, fixture_judgments
from tvrl_bench.report.errors import ReportError
from tvrl_bench.report.winrate.judgments import Judgment, JudgmentStore, read_judgments_csv, verdict_from_choice


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


def test_replacing_deletes_only_that_judges_judgments_of_the_two_methods_in_the_study(tmp_path):
    def j(study, a, b, judge, prompt="p"):
        return Judgment(study, prompt, "0", a, b, a, judge, "win")

    kept = [j("s", "TVRL", "GRPO", "human:alice"), j("s", "TVRL", "base", "evaluator:wide"),
            j("other", "TVRL", "GRPO", "evaluator:wide")]
    earlier = [j("s", "TVRL", "GRPO", "evaluator:wide", "old"), j("s", "GRPO", "TVRL", "evaluator:wide", "swapped")]
    with JudgmentStore(tmp_path / "j.sqlite") as store:
        store.add(kept + earlier)
        store.add([j("s", "TVRL", "GRPO", "evaluator:wide", "new")], replacing=("s", "TVRL", "GRPO", "evaluator:wide"))
        rows = store.frame()
    assert sorted(zip(rows["study"], rows["prompt"], rows["method_b"], rows["judge"])) == sorted(
        [(x.study, x.prompt, x.method_b, x.judge) for x in kept] + [("s", "new", "GRPO", "evaluator:wide")])


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
