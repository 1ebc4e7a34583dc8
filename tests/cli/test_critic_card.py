"""`tvrl-bench critic-card`: a small card end to end, its help, and its one-line refusals."""

from __future__ import annotations

import csv

import pytest
import torch
from mlflow import MlflowClient

from tvrl_bench.cli.main import build_parser, main


def _checkpoint(folder, profile: str = "components/profiles/toy.gin"):
    """A trial checkpoint of `profile`'s policy (the slot base by default), as a trained trial's."""
    import gin

    from tvrl_bench.config import load_config
    from tvrl_bench.training.checkpoint import CheckpointDir
    from tvrl_bench.training.trial.build import build_settings

    try:
        policy = build_settings(load_config([profile])).policy
    finally:
        gin.clear_config()
    params = {str(i): p.detach().clone() for i, p in enumerate(policy.trainable_parameters())}
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    CheckpointDir(folder).save(1, None, params, optimizer, {})
    return folder


def _study(tmp_path, name: str) -> tuple[str, MlflowClient, str]:
    """A study's parent run in a fresh SQLite store, as tvrl-sweep tags it: (uri, client, parent run id)."""
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    client = MlflowClient(uri)
    experiment = client.create_experiment(name, artifact_location=str(tmp_path / "artifacts"))
    parent = client.create_run(experiment, run_name=name, tags={"tvrl.role": "study", "tvrl.study": name})
    return uri, client, parent.info.run_id


def test_a_small_card_writes_its_table_and_csv_and_logs_it_on_the_study(tmp_path, capsys):
    out = tmp_path / "card.csv"
    trained = _checkpoint(tmp_path / "ckpt")
    uri, client, parent = _study(tmp_path, "rewards")
    code = main(["critic-card", "components/rewards/toy_oracle.gin", "components/rewards/toy_verdicts.gin",
                 "--trained", str(trained), "--seeds", "0", "--prompts", "2", "--group", "2", "--timing-videos", "2",
                 "--csv", str(out), "--no-progress", "--study", "rewards", "--tracking-uri", uri])
    text = capsys.readouterr().out
    assert code == 0
    logged = client.download_artifacts(parent, "critic_card.csv", str(tmp_path / "back"))
    assert open(logged).read() == out.read_text()  # what the study page reads
    rows = list(csv.DictReader(out.open()))
    assert [(r["critic"], r["policy"]) for r in rows] == [("toy_oracle", "base"), ("toy_oracle", "trained"),
                                                         ("toy_verdicts", "base"), ("toy_verdicts", "trained")]
    oracle = rows[0]
    assert float(oracle["agreement"]) >= 0.75 and 0 <= float(oracle["locality"]) <= 1
    assert float(oracle["locality_baseline"]) == 0.25 and float(oracle["seconds_per_video"]) > 0
    assert "agreement_top_left" in oracle
    verdicts = rows[2]  # the evaluator's own verdicts agree with it exactly; credit from toy_oracle's maps
    assert float(verdicts["agreement"]) == 1.0 and float(verdicts["ece"]) == 0.0
    for row in rows:  # the exact verdicts never order a pair against the evaluator (NaN: no pair ordered)
        assert row["critic"] != "toy_verdicts" or row["inversion_checks"] in ("0.0000", "nan")
        assert {"inversion", "inversion_checks", "inversion_vivid"} <= set(row)
    assert "| toy_oracle |" in text and "| toy_verdicts |" in text and text.count("\n|") >= 3
    assert "inversion, base: reward / checks / vivid pairs / worst key" in text


def test_help_explains_every_flag():
    parser = build_parser()
    sub = next(a for a in parser._subparsers._group_actions).choices["critic-card"]
    flags = [a for a in sub._actions if a.option_strings and a.dest not in ("help",)]
    assert {f.dest for f in flags} >= {"profile", "trained", "seeds", "prompts", "group", "timing_videos", "csv",
                                       "no_progress", "study", "tracking_uri"}
    assert all(f.help and len(f.help) > 15 for f in flags)


@pytest.mark.parametrize("flags, words", [
    (["components/rewards/nothing.gin"], "no such file"),
    (["components/rewards/toy_oracle.gin", "--prompts", "0"], "--prompts must be >= 1"),
    (["components/rewards/toy_oracle.gin", "--trained", "/nonexistent"], "no state.pt there"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, flags, words):
    assert main(["critic-card", *flags, "--csv", str(tmp_path / "c.csv"), "--no-progress"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("tvrl-bench critic-card: error:") and words in line, line


def test_an_unknown_study_is_one_line_exit_2_before_measuring(tmp_path, capsys):
    uri, _, _ = _study(tmp_path, "rewards")
    capsys.readouterr()  # MLflow's own lines from creating the store (they reach capsys where MLflow loads first)
    code = main(["critic-card", "components/rewards/toy_oracle.gin", "--study", "reward", "--tracking-uri", uri,
                 "--csv", str(tmp_path / "c.csv"), "--no-progress"])
    assert code == 2 and not (tmp_path / "c.csv").exists()
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--study reward: no study of that name" in line and "tvrl-sweep sweeps/reward.gin" in line, line


def test_a_critic_of_another_world_is_one_line_exit_2(tmp_path, capsys):
    code = main(["critic-card", "components/rewards/toy_qwen_slots.gin", "--profile", "components/profiles/toy_v3.gin",
                 "--seeds", "0", "--prompts", "1", "--group", "1", "--csv", str(tmp_path / "c.csv"), "--no-progress"])
    assert code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "toy_qwen_slots" in line and "slot" in line and "sprite" in line, line
