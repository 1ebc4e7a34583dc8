"""`tvrl-bench critic-card` refuses, before it measures anything, what would give a wrong or silently smaller card:
one line, exit 2, nothing written and nothing logged (cli/critic_card_checks.py)."""

from __future__ import annotations

import pytest
from mlflow import MlflowClient

from tests.cli.test_critic_card import _checkpoint

from tvrl_bench.cli.critic_card import DEFAULT_CRITICS, log_to_study
from tvrl_bench.cli.main import build_parser, main
from tvrl_bench.sweeps.stage_record import PROFILE_TAG
from tvrl_bench.sweeps.state import StudyTracker

ORACLE = "components/rewards/toy_oracle.gin"


def _refused(tmp_path, capsys, flags: list[str]) -> str:
    csv = tmp_path / "c.csv"
    capsys.readouterr()  # what the test's own setup printed (MLflow creating a store)
    assert main(["critic-card", *flags, "--csv", str(csv), "--no-progress"]) == 2
    assert not csv.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    (line,) = err
    assert line.startswith("tvrl-bench critic-card: error:"), line
    return line


@pytest.mark.parametrize("flags, words", [
    ([ORACLE, "--seeds", "0", "1", "0"], "--seeds names 0 twice"),
    ([ORACLE, "components/rewards/toy_verdicts.gin", ORACLE], "critic toy_oracle is named twice"),
    (["components/credit/window3.gin"], "critic preset components/credit/window3.gin binds no critic (REWARD"),
    (["components/objectives/tvrl_video.gin"], "binds no critic"),
    (["components/rewards/nothing.gin"], "no such file"),
    ([ORACLE, "--seeds", "0", "--prompts", "100000"], "--prompts 100000: components/profiles/toy.gin's dataset has"),
])
def test_a_card_that_would_be_wrong_is_refused_before_measuring(tmp_path, capsys, flags, words):
    assert words in _refused(tmp_path, capsys, flags)


def test_the_default_critics_resolve_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from tvrl_bench.cli.critic_card_checks import check_args

    args = build_parser().parse_args(["critic-card"])
    check_args(args)
    assert [p.rsplit("/", 2)[-2:] for p in args.critics] == [p.split("/")[-2:] for p in DEFAULT_CRITICS]
    assert args.critics[0].startswith("/")


def test_a_trial_of_another_world_is_refused_as_trained(tmp_path, capsys):
    trained = _checkpoint(tmp_path / "sprite_trial", "components/profiles/toy_v3.gin")
    line = _refused(tmp_path, capsys, [ORACLE, "--trained", str(trained), "--seeds", "0", "--prompts", "1"])
    assert f"--trained {trained}: its checkpoint is not components/profiles/toy.gin's policy" in line
    assert "another world or policy" in line


def _study(tmp_path, profile: str | None) -> tuple[str, MlflowClient, str]:
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    client = MlflowClient(uri)
    experiment = client.create_experiment("rewards", artifact_location=str(tmp_path / "artifacts"))
    tags = {"tvrl.role": "study", "tvrl.study": "rewards", **({PROFILE_TAG: profile} if profile else {})}
    return uri, client, client.create_run(experiment, run_name="rewards", tags=tags).info.run_id


def test_a_study_of_another_world_keeps_its_card(tmp_path, capsys):
    uri, client, parent = _study(tmp_path, "components/profiles/toy_v3.gin")
    line = _refused(tmp_path, capsys, [ORACLE, "--study", "rewards", "--tracking-uri", uri, "--seeds", "0",
                                       "--prompts", "1"])
    assert "--study rewards: its trials ran components/profiles/toy_v3.gin (sprites world)" in line
    assert "--profile components/profiles/toy_v3.gin" in line
    assert client.list_artifacts(parent) == []


def test_a_card_logged_again_says_it_replaced_the_one_before(tmp_path):
    uri, client, parent = _study(tmp_path, "components/profiles/toy.gin")
    tracker = StudyTracker.find(uri, "rewards")
    card = tmp_path / "card.csv"
    card.write_text("critic\ntoy_oracle\n")
    assert log_to_study(card, tracker) is False
    assert log_to_study(card, tracker) is True
