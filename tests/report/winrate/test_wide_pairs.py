"""Judging by the wide evaluation's records: verdicts from the recorded scores paired by prompt, stored in place of
earlier ones, read by the win-rate table; runs without records, or with other prompts, refused by name."""

from __future__ import annotations

import pytest

from tests.report.helpers import read_rendered
from tests.report.winrate.wide_helpers import LOSSES, SCORES, TIES, VERDICTS, WINS, log_wide_study, records
from tvrl_bench.report import regenerate
from tvrl_bench.report.errors import ReportError
from tvrl_bench.report.winrate.judgments import JudgmentStore
from tvrl_bench.report.winrate.wide_pairs import WIDE_JUDGE, judge_wide, verdict


def test_the_verdict_is_the_sign_of_the_score_difference():
    assert [verdict(0.6, 0.5), verdict(0.5, 0.6), verdict(0.5, 0.5), verdict(1, 1.0)] == ["win", "loss", "tie", "tie"]


def test_records_pair_by_prompt_and_the_winrate_table_counts_wins_over_decisive(new_study, mlflow_store, tmp_path):
    uri, client, _ = mlflow_store
    study = new_study("wide")
    runs = log_wide_study(study)
    store = tmp_path / "judgments.sqlite"
    judgments = judge_wide(study.study, "TVRL", "GRPO", store=store, tracking_uri=uri)
    assert {(j.seed, j.prompt, j.sample): j.verdict for j in judgments} == VERDICTS
    assert len(judgments) == len(VERDICTS)
    assert all(j.judge == WIDE_JUDGE and j.left == "TVRL" for j in judgments)
    assert {(j.seed, j.run_a, j.run_b) for j in judgments} == {
        (str(s), runs[("TVRL", s)], runs[("GRPO", s)]) for s in SCORES}
    # Rerun, and rerun with the sides swapped: the earlier judgments are replaced, never counted twice.
    judge_wide(study.study, "TVRL", "GRPO", store=store, tracking_uri=uri)
    swapped = judge_wide(study.study, "GRPO", "TVRL", store=store, tracking_uri=uri)
    assert sorted(j.verdict for j in swapped) == sorted(["loss"] * WINS + ["win"] * LOSSES + ["tie"] * TIES)
    with JudgmentStore(store) as opened:
        frame = opened.frame(study.study)
    assert len(frame) == len(VERDICTS) and set(frame["method_a"]) == {"GRPO"}
    regenerate(study.study, tracking_uri=uri, out_dir=tmp_path / "reports", tables="winrate", judgments=store,
               plots=False)
    _, rows = read_rendered(tmp_path / "reports" / study.study, "winrate", "md")
    n = WINS + LOSSES + TIES
    assert rows[0][0] == "TVRL vs GRPO" and rows[0][-1] == str(n)
    assert rows[0][1:4] == [f"{100 * WINS / n:.2f}", f"{100 * LOSSES / n:.2f}", f"{100 * TIES / n:.2f}"]
    assert rows[0][4].split(" ")[0] == f"{100 * WINS / (WINS + LOSSES):.2f}"


def test_a_run_without_wide_records_is_named_and_nothing_is_stored(new_study, mlflow_store, tmp_path):
    uri, client, _ = mlflow_store
    study = new_study("wide_missing")
    runs = log_wide_study(study, without=("GRPO", 1))
    store = tmp_path / "judgments.sqlite"
    with pytest.raises(ReportError) as raised:
        judge_wide(study.study, "TVRL", "GRPO", store=store, tracking_uri=uri)
    message = str(raised.value)
    name = client.get_run(runs[("GRPO", 1)]).info.run_name
    assert message.startswith(f"run '{name}' ({runs[('GRPO', 1)]}, method GRPO) has no wide_eval/results.json: ")
    assert "training.trial.wide_eval_prompts > 0" in message and "\n" not in message
    assert not store.exists()
    # A run loaded from a record (tvrl-bench record load) has no artifacts at all: the line says so.
    client.set_tag(runs[("GRPO", 1)], "tvrl.imported_from", "reports/records/wide.jsonl")
    with pytest.raises(ReportError, match=r"method GRPO\) has no wide_eval/results.json \(it was loaded from the "
                                          r"record reports/records/wide.jsonl, which holds no artifacts\): rerun"):
        judge_wide(study.study, "TVRL", "GRPO", store=store, tracking_uri=uri)


@pytest.mark.parametrize("grpo_records, expected", [
    (records(SCORES[1]["GRPO"])[:3], r"has 4 wide_eval records and run '.+' \(.+, method GRPO\) has 3; "),
    ([{**r, "prompt": "a cat"} if r["index"] == 3 else r for r in records(SCORES[1]["GRPO"])],
     r"seed 1: prompt 'a green cone spins' \(record 1 of it\) is in the wide_eval records of run '.+' \(.+, method "
     r"TVRL\) but not of run"),
    ([{**r, "score": None} for r in records(SCORES[1]["GRPO"])],
     r"method GRPO\): wide_eval/results.json record 0 \(prompt 'a red ball rolls left'\) has score None, not a "
     r"number"),
])
def test_records_of_other_prompts_or_without_scores_are_refused(new_study, mlflow_store, tmp_path, grpo_records,
                                                                 expected):
    uri, _, _ = mlflow_store
    study = new_study("wide_other")
    log_wide_study(study, records_of={("GRPO", 1): grpo_records})
    with pytest.raises(ReportError, match=expected):
        judge_wide(study.study, "TVRL", "GRPO", store=tmp_path / "judgments.sqlite", tracking_uri=uri)


def test_two_trial_pairs_of_one_seed_are_refused(new_study, mlflow_store, tmp_path):
    """Two GRPO trials of seed 0 (two credits): their judgments would be one record each, so the pairing is refused."""
    uri, _, _ = mlflow_store
    study = new_study("wide_twice")
    runs = log_wide_study(study)
    extra = study.trial({"policy": "toy", "sampler": "sage", "reward": "toy_oracle", "method": "GRPO", "seed": "0",
                         "credit": "frame"}, {"eval/overall": 0.5})
    with pytest.raises(ReportError, match=rf"two trial pairs \({runs[('TVRL', 0)]} / .+ and {runs[('TVRL', 0)]} / .+\) "
                                          r"both have seed 0.+narrow --a / --b") as raised:
        judge_wide(study.study, "TVRL", "GRPO", store=tmp_path / "judgments.sqlite", tracking_uri=uri)
    assert extra in str(raised.value) and runs[("GRPO", 0)] in str(raised.value)
