"""A KL term's reference is the pretrained policy, also for a trial resumed from a checkpoint."""

from __future__ import annotations

import gin
import torch

from tests.training.conftest import FAST
from tvrl_bench.config import load_config
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.loop import Trainer
from tvrl_bench.training.settings import TrialSettings


def kl_trainer(policy_path: str, folder) -> Trainer:
    load_config(["components/profiles/toy_v1.gin", "components/objectives/grpo_kl.gin"],
                [*FAST, f"policies.toy.path = '{policy_path}'"])
    settings = TrialSettings()
    gin.clear_config()
    return Trainer(settings, Processes(cpu=True), CheckpointDir(folder), None, progress=False)


def test_a_resumed_trial_keeps_the_pretrained_reference(tiny_policy_path, tmp_path):
    trainer = kl_trainer(tiny_policy_path, tmp_path / "a")
    pretrained = [p.detach().clone() for p in trainer.parameters]
    saved = {
        "parameters": {k: v + 0.5 for k, v in trainer.state().items()},  # a checkpoint far from the pretrained policy
        "optimizer": trainer.optimizer.state_dict(),
        "extra": {},
        "step": 3,
    }
    trainer.load_state(saved)
    assert all(torch.equal(p, q + 0.5) for p, q in zip(trainer.parameters, pretrained))
    with trainer.policy.reference():
        assert all(torch.equal(p, q) for p, q in zip(trainer.parameters, pretrained))
    assert all(torch.equal(p, q + 0.5) for p, q in zip(trainer.parameters, pretrained))  # swapped back
