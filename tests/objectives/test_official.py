"""objectives.tvrl_official: its loss against its parts, its hooks, and toy trials that take every trainer path."""

from __future__ import annotations

import gin
import pytest
import torch

from tests.training.conftest import FAST
from tvrl_bench.config import load_config
from tvrl_bench.objectives.kl import stepwise_kl
from tvrl_bench.objectives.losses import credit_weighted_grpo_loss
from tvrl_bench.objectives.official import OfficialTVRL
from tvrl_bench.objectives.per_check import per_check_ratio_loss
from tvrl_bench.training import loop
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.distributed import Processes
from tvrl_bench.training.settings import TrialSettings


def test_loss_is_the_per_check_loss_plus_the_adaptive_kl_mix():
    g = torch.Generator().manual_seed(0)
    new, old = torch.randn(2, 1, 6, generator=g) * 0.01, torch.zeros(2, 1, 6)
    w = torch.rand(2, 3, 6, generator=g)
    w[1, 2] = 0  # a missing check
    adv, kl = torch.tensor([1.0, -0.5]), torch.tensor([[0.2], [0.4]])
    objective = OfficialTVRL(kl_min_coef=1e-3, kl_target=1e-2, kl_max_coef=1e-2)
    loss, stats = objective.loss(new, old, adv, w, kl)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    policy, _ = per_check_ratio_loss(new, old, adv, w, mask, 1e-4)
    mix = 1.0 * kl.mean() + 0.1 * stepwise_kl(old, new).mean()
    torch.testing.assert_close(loss, policy + 1e-3 * mix)
    assert float(stats["kl_coef"]) == pytest.approx(1e-3)
    merged = OfficialTVRL(mode="merged_gradient", kl="none")
    flat = torch.rand(2, 6, generator=g)
    torch.testing.assert_close(merged.loss(new, old, adv, flat)[0], credit_weighted_grpo_loss(new, old, adv, flat)[0])


def test_moving_reference_refreshes_every_n_updates_and_round_trips():
    p = torch.nn.Parameter(torch.zeros(3))
    objective = OfficialTVRL(refresh_every=2)
    objective.bind([p])
    with torch.no_grad():
        p.add_(1.0)
    with objective.reference_context(None):
        assert torch.equal(p, torch.zeros(3))  # the reference: the initial weights
    assert torch.equal(p, torch.ones(3))
    objective.after_update({"kl": 0.0})
    with objective.reference_context(None):
        assert torch.equal(p, torch.zeros(3))
    objective.after_update({"kl": 0.0})  # second update: reloaded from the policy
    with objective.reference_context(None):
        assert torch.equal(p, torch.ones(3))
    clone = OfficialTVRL(refresh_every=2)
    clone.bind([torch.nn.Parameter(torch.zeros(3))])
    clone.load_state_dict(objective.state_dict())
    assert clone.updates == 2 and torch.equal(clone.moving.snapshot[0], torch.ones(3))
    assert clone.controller.coef == objective.controller.coef


@pytest.mark.parametrize("bindings", [
    ["objectives.tvrl_official.mode = 'question'", "CREDIT = @credit.uniform()"],
    ["objectives.tvrl_official.mode = 'video_adv'", "training.trial.optimizer = @training.optimizer()",
     "training.optimizer.kind = 'muon_adamw'", "training.schedule.balance = True"],
])
def test_toy_trials_train_with_the_official_objective(tmp_path, bindings):
    load_config(["components/profiles/toy.gin", "components/objectives/tvrl_official.gin"], FAST + bindings)
    settings = TrialSettings()
    gin.clear_config()
    trainer = loop.Trainer(settings, Processes(cpu=True), CheckpointDir(tmp_path), None, progress=False)
    before = [p.detach().clone() for p in trainer.parameters]
    batch = trainer.collect(0)
    k = batch.scored.mask.shape[1]
    if settings.objective.mode == "question":
        assert batch.advantages.shape == (4, k) and batch.train_weights.shape[1] == 1
    else:
        assert batch.train_weights.shape[:2] == (4, k)
        zero = ~batch.scored.mask
        assert (batch.train_weights[zero.to(batch.train_weights.device)] == 0).all()
    out = trainer.step(1)
    assert torch.isfinite(torch.tensor(out.metrics["train/loss"])) and out.metrics["train/kl_coef"] > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.parameters))
    assert settings.objective.updates == 1
