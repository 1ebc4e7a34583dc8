"""A tiny-config trial of the paper's classes (HunyuanVideo-1.5 policy, Qwen3.5 critic) through `tvrl-train`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from mlflow.tracking import MlflowClient

import pytest

from tests.policies.tiny_hunyuan import save_tiny_hunyuan
from tests.rewards.tiny_qwen import save_tiny_qwen
from tests.support import console_script

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

# What every tiny trial here shares: 3 denoising steps, one prompt's group of 2 rollouts, a tiny dataset.
TINY_TRIAL = [
    "training.schedule.num_steps = 3",
    "training.trial.prompts_per_step = 1",
    "training.trial.group_size = 2",
    "training.trial.micro_batch = 2",
    "training.trial.eval_prompts = 2",
    "training.trial.sample_videos = 1",
    "datasets.toy.n_train = 8",
    "datasets.toy.n_eval = 4",
]


def train_two_steps(tmp_path: Path, lines: list[str]) -> tuple[MlflowClient, object]:
    """Write `lines` and TINY_TRIAL as a gin file and train it for two steps through `tvrl-train`: (client, run)."""
    config = tmp_path / "tiny_paper.gin"
    config.write_text("\n".join([*lines, *TINY_TRIAL]) + "\n")
    result = subprocess.run(
        [console_script("tvrl-train"), str(config), "--steps", "2", "--tracking-uri", f"sqlite:///{tmp_path / 't.db'}",
         "--out", str(tmp_path / "runs"), "--no-progress"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    client = MlflowClient(f"sqlite:///{tmp_path / 't.db'}")
    run = client.search_runs([client.get_experiment_by_name("trials").experiment_id])[0]
    assert run.info.status == "FINISHED"
    return client, run


def test_tiny_hunyuan_policy_and_qwen3_5_critic_train_through_tvrl_train(tmp_path):
    policy = save_tiny_hunyuan(tmp_path / "hunyuan")
    critic = save_tiny_qwen(tmp_path / "qwen3_5", "qwen3_5")
    lines = [
        "include 'components/profiles/toy_v1.gin'",
        "include 'components/policies/hunyuan_video15_480p.gin'",
        "include 'components/rewards/qwen3_5_9b.gin'",
        *policy.gin_bindings(),
        f"rewards.qwen_vl.path = '{critic}'",
        "rewards.qwen_inputs.dtype = 'float32'",
        "rewards.qwen_inputs.device = 'cpu'",
        "training.schedule.shift = 5.0",  # the tiny checkpoint's scheduler shift (checked by the trainer)
    ]
    client, run = train_two_steps(tmp_path, lines)
    assert run.data.params["policy"] == "hunyuan_video15_480p" and run.data.params["reward"] == "qwen3_5_9b"
    assert run.data.params["method"] == "TVRL"
    losses = client.get_metric_history(run.info.run_id, "train/loss")
    assert [m.step for m in losses] == [1, 2]
    assert run.data.metrics["train/credit_entropy"] < 1.0  # the critic's gradients shaped the credit map
    assert "eval/overall" in run.data.metrics


def test_the_paper_profile_runs_end_to_end_with_tiny_checkpoints(tmp_path):
    """components/profiles/paper.gin as shipped (official recipe), only sizes and paths shrunk to tiny models."""
    policy = save_tiny_hunyuan(tmp_path / "hunyuan")
    critic = save_tiny_qwen(tmp_path / "qwen3_5", "qwen3_5")
    lines = [
        "include 'components/profiles/paper.gin'",
        "include 'components/evaluators/toy.gin'",  # VBench-2.0 needs its own environment
        "include 'components/datasets/toy.gin'",
        *[b for b in policy.gin_bindings() if "lora" not in b],  # the profile's full fine-tuning
        f"rewards.qwen_vl.path = '{critic}'",
        "rewards.qwen_inputs.dtype = 'float32'",
        "rewards.qwen_inputs.device = 'cpu'",
        "rewards.qwen_inputs.frames = 4",
        "rewards.qwen_inputs.max_pixels = 1536",
        "rewards.qwen_inputs.min_pixels = 256",
        "training.trial.num_gpus = 0",
    ]
    client, run = train_two_steps(tmp_path, lines)
    assert run.data.params["credit"] == "routing_grid3"
    assert 0 < run.data.metrics["train/kl_coef"] <= 1e-5
    assert [m.step for m in client.get_metric_history(run.info.run_id, "train/loss")] == [1, 2]
    assert run.data.metrics["train/credit_entropy"] < 1.0
