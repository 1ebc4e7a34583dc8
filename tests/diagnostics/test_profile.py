"""The profile a diagnostic measures (tvrl_bench/diagnostics/profile.py): one built trial and its trainer, sharing
their parts, and the pathwise reward of a batch computed through the built trial (gradients.py)."""

from __future__ import annotations

import argparse

import torch

from tests.training.conftest import FAST
from tvrl_bench.diagnostics.gradients import batch_reward, flat_gradient
from tvrl_bench.diagnostics.profile import profile_trial


def _args(tiny_policy_path, seed=3):
    return argparse.Namespace(profile="components/profiles/toy_v1.gin", files=[], checkpoint=None, seed=seed,
                              gin_bindings=[*FAST, f"policies.toy.path = '{tiny_policy_path}'"])


def test_the_trial_and_its_trainer_share_their_parts_and_the_seed(tiny_policy_path):
    with profile_trial(_args(tiny_policy_path)) as (trial, trainer):
        assert trainer.policy is trial.policy and trainer.s is trial.settings and trial.settings.seed == 3
        assert trainer.micro_batch == trial.micro_batch


def test_a_batchs_pathwise_reward_reaches_the_policy_and_scores_alone_without_backward(tiny_policy_path):
    with profile_trial(_args(tiny_policy_path)) as (trial, trainer):
        reward = batch_reward(trial, trainer, 0, seed=0, backward=True)
        assert 0 <= float(reward) <= 1 and float(flat_gradient(trainer.parameters).norm()) > 0
        for p in trainer.parameters:
            p.grad = None
        again = batch_reward(trial, trainer, 0, seed=0, backward=False)
        assert torch.equal(again, reward.detach()) and all(p.grad is None for p in trainer.parameters)
