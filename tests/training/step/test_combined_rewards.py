"""A step with a reward made of several critics: GDPO advantages from each critic's rewards, each critic's reward
logged, the credit from the named critic; and the toy_verdicts preset's trial end to end through `tvrl-train`."""

from __future__ import annotations

import gin
import pytest
import torch

from tests.cli.test_train import bindings, runs, train
from tests.training.conftest import FAST
from tvrl_bench.config import load_config
from tvrl_bench.rewards.combined import gdpo_advantages
from tvrl_bench.training.loop import Trainer
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.checkpoint import CheckpointDir


def trainer(policy_path: str, folder, *files: str) -> Trainer:
    load_config(["components/profiles/toy_v1.gin", *files], [*FAST, f"policies.toy.path = '{policy_path}'"])
    settings = TrialSettings()
    gin.clear_config()
    return Trainer(settings, Processes(cpu=True), CheckpointDir(folder), "run-1", None, progress=False)


def test_a_gdpo_step_takes_its_advantages_from_each_critics_rewards_and_logs_them(tiny_policy_path, tmp_path):
    t = trainer(tiny_policy_path, tmp_path, "components/rewards/combined_gdpo.gin")
    batch = t.collect(0)
    by_critic = batch.all_critic_rewards
    assert by_critic.keys() == {"toy_oracle", "toy_verdicts"}
    torch.testing.assert_close(batch.all_rewards, 0.5 * by_critic["toy_oracle"] + 0.5 * by_critic["toy_verdicts"])
    expected = gdpo_advantages(by_critic, {"toy_oracle": 0.5, "toy_verdicts": 0.5}, batch.all_groups, t.s.advantage_clip)
    torch.testing.assert_close(batch.all_advantages, expected)
    metrics = t.step(1).metrics
    assert {"train/reward_toy_oracle_mean", "train/reward_toy_verdicts_mean", "train/reward_mean"} <= set(metrics)


def test_a_lone_critic_logs_no_per_critic_rewards(tiny_policy_path, tmp_path):
    metrics = trainer(tiny_policy_path, tmp_path).step(0).metrics
    assert [k for k in metrics if k.startswith("train/reward_") and k.endswith("_mean")] == ["train/reward_mean"]


@pytest.mark.integration
def test_the_toy_verdicts_preset_trains_through_tvrl_train_and_logs_each_critics_reward(tmp_path, tiny_policy_path):
    result = train(tmp_path, "components/profiles/toy_v1.gin", "components/rewards/toy_verdicts.gin", "--steps", "2",
                   *bindings(tiny_policy_path))
    assert result.returncode == 0, result.stderr[-3000:]
    client, found = runs(tmp_path)
    (run,) = found
    assert run.info.status == "FINISHED" and run.data.params["reward"] == "toy_verdicts"
    history = {name: client.get_metric_history(run.info.run_id, f"train/{name}")
               for name in ("reward_mean", "reward_toy_verdicts_mean", "reward_toy_oracle_mean", "credit_entropy")}
    assert all([m.step for m in h] == [1, 2] for h in history.values()), history
    # toy_verdicts has weight 1, toy_oracle 0: the reward is the verdicts' fraction of checks passed
    assert [m.value for m in history["reward_mean"]] == [m.value for m in history["reward_toy_verdicts_mean"]]
    assert all(0 <= m.value <= 1 for m in history["reward_toy_oracle_mean"])
    assert all(m.value < 1 for m in history["credit_entropy"])  # toy_oracle's maps, not uniform credit
