"""The built trial (tvrl_bench/training/trial/built.py): its samples are the training step's own rollouts, its
scores the step's, its deterministic samples the evaluation's, and a checkpoint's weights load into its policy."""

from __future__ import annotations

import gin
import pytest
import torch

from tests.training.conftest import FAST
from tvrl_bench.config import ConfigError
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.trial.built import build_trial

PROFILE = "components/profiles/toy_v1.gin"


@pytest.fixture
def bindings(tiny_policy_path):
    return [*FAST, f"policies.toy.path = '{tiny_policy_path}'"]


def step_prompts(trainer, step: int) -> tuple[list[str], list[list[str]]]:
    items, _ = trainer.step_items(step)
    group = trainer.s.group_size
    return [it.prompt for it in items for _ in range(group)], [list(it.checks) for it in items for _ in range(group)]


def test_a_sample_is_the_training_steps_own_rollouts_and_scores(bindings, tmp_path):
    trial = build_trial([PROFILE], bindings)
    assert gin.config_str() == ""  # the config is cleared: the next build starts from nothing
    trainer = trial.trainer(tmp_path)
    batch = trainer.collect(1)
    prompts, checks = step_prompts(trainer, 1)
    sampled = trial.sample(prompts, trial.noise("rollout", 1, 0), group=trial.settings.group_size,
                           updates=trial.settings.minibatches)
    assert torch.equal(sampled.videos, batch.video)
    assert torch.equal(sampled.rollout.latents, batch.rollout.latents)
    scored = trial.score(sampled.videos, prompts, checks, trial.credit.needs_grads, trial.credit.grad_space)
    assert torch.equal(scored.scores, batch.scored.scores)


def test_another_noise_stream_samples_other_videos(bindings):
    trial = build_trial([PROFILE], bindings)
    prompts = [it.prompt for it in list(trial.dataset.train)[:2]]
    first = trial.sample(prompts, trial.noise("rollout", 0, 0)).videos
    assert torch.equal(first, trial.sample(prompts, trial.noise("rollout", 0, 0)).videos)
    assert not torch.equal(first, trial.sample(prompts, trial.noise("rollout", 0, 0, seed=1)).videos)


def test_generate_is_the_evaluations_deterministic_sample(bindings, tmp_path):
    trial = build_trial([PROFILE], bindings)
    trainer = trial.trainer(tmp_path)
    prompts = [it.prompt for it in trainer.eval_items[:2]]
    assert torch.equal(trial.generate(prompts, trial.noise("eval")), trainer.evaluation.generate(2))
    metrics, records = trial.evaluate(trainer.evaluation.generate(2), prompts, [it.checks for it in trainer.eval_items[:2]])
    assert 0 <= metrics["overall"] <= 1 and len(records) == 2


def test_a_checkpoints_weights_load_into_a_fresh_trials_policy(bindings, tmp_path):
    trained = build_trial([PROFILE], bindings)
    trainer = trained.trainer(tmp_path)
    trainer.step(0)
    trainer.save(1)
    fresh = build_trial([PROFILE], bindings)
    before = [p.clone() for p in fresh.policy.trainable_parameters()]
    assert fresh.load_weights(tmp_path) == 1
    after = list(fresh.policy.trainable_parameters())
    assert all(torch.equal(a, b) for a, b in zip(after, trained.policy.trainable_parameters()))
    assert not all(torch.equal(a, b) for a, b in zip(after, before))
    assert fresh.load_weights(CheckpointDir(tmp_path / "empty")) is None


def test_a_config_mistake_is_one_line_where_it_was_bound(bindings):
    with pytest.raises(ConfigError) as refused:
        build_trial([PROFILE], [*bindings, "training.trial.micro_batch = 0"])
    assert str(refused.value).startswith("--gin_bindings: training.trial.micro_batch = 0"), str(refused.value)
