"""`tvrl-bench judge --wide` on a logged study (MLflow on SQLite): the counts printed and stored, a rerun that does
not count twice, the winrate table of tvrl-report; a run without records, --judge with --wide, neither given: one
line, exit 2."""

from __future__ import annotations

import csv

import pytest
from mlflow import MlflowClient

from tests.report.helpers import StudyLog
from tests.report.winrate.wide_helpers import LOSSES, TIES, VERDICTS, WINS, log_wide_study
from tvrl_bench.cli import judge as judge_cli
from tvrl_bench.cli.main import main
from tvrl_bench.cli.report import main as report_main
from tvrl_bench.report.winrate.judgments import JudgmentStore
from tvrl_bench.report.winrate.wide_pairs import WIDE_JUDGE


@pytest.fixture(scope="module")
def tracking(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    runs = log_wide_study(StudyLog(client, "wide", root / "artifacts"))
    missing = log_wide_study(StudyLog(client, "wide_missing", root / "artifacts"), without=("GRPO", 0))
    return uri, client, runs, missing


def judge(tracking, tmp_path, *flags: str) -> int:
    return main(["judge", "--tracking-uri", tracking[0], "--store", str(tmp_path / "judgments.sqlite"), *flags])


def test_wide_judgments_are_stored_once_and_feed_the_winrate_table(tracking, tmp_path, capsys):
    for _ in range(2):  # the rerun replaces the first run's judgments
        assert judge(tracking, tmp_path, "--study", "wide", "--wide") == 0
        out = capsys.readouterr().out
        assert f"{len(VERDICTS)} judgments stored" in out and f"A wins {WINS}, B wins {LOSSES}, ties {TIES}" in out
    with JudgmentStore(tmp_path / "judgments.sqlite") as store:
        frame = store.frame("wide")
    assert len(frame) == len(VERDICTS) and set(frame["judge"]) == {WIDE_JUDGE}
    assert report_main(["--study", "wide", "--tracking-uri", tracking[0], "--tables", "winrate", "--judgments",
                        str(tmp_path / "judgments.sqlite"), "--out", str(tmp_path / "reports"), "--no-plots",
                        "--no-log", "--no-page", "--format", "csv"]) == 0
    with (tmp_path / "reports" / "wide" / "winrate.csv").open() as f:
        row = next(csv.DictReader(f))
    assert row["Comparison"] == "TVRL vs GRPO" and int(row["n"]) == WINS + LOSSES + TIES
    assert float(row["Win rate (excl. ties)"]) == pytest.approx(100 * WINS / (WINS + LOSSES), abs=0.005)


def test_a_run_without_wide_records_is_one_line_naming_it(tracking, tmp_path, capsys):
    uri, client, _, missing = tracking
    assert judge(tracking, tmp_path, "--study", "wide_missing", "--wide") == 2
    err = capsys.readouterr().err
    run_id = missing[("GRPO", 0)]
    assert err.count("\n") == 1 and err.startswith("tvrl-bench judge: error: ")
    assert f"run '{client.get_run(run_id).info.run_name}' ({run_id}, method GRPO) has no wide_eval/results.json" in err
    assert "training.trial.wide_eval_prompts > 0" in err
    assert not (tmp_path / "judgments.sqlite").exists()


@pytest.mark.parametrize("flags, expected", [
    (["--wide", "--judge", "components/judges/toy_evaluator.gin"], "--wide judges by the evaluator's recorded "
                                                                   "wide-evaluation scores: drop --judge"),
    (["--wide", "--gin_bindings", "judges.evaluator.tolerance = 0.1"], "drop --judge and --gin_bindings"),
    ([], "give a judge preset, e.g. --judge components/judges/toy_evaluator.gin, or --wide"),
])
def test_judge_with_wide_or_neither_is_refused_in_one_line(tracking, tmp_path, capsys, flags, expected):
    assert judge(tracking, tmp_path, "--study", "wide", *flags) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err


def test_the_help_names_the_judge_the_judgments_are_stored_under():
    assert judge_cli.WIDE_JUDGE == WIDE_JUDGE
