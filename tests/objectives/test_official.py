"""objectives.tvrl_official: its loss against its parts, its hooks, and toy trials that take every trainer path."""

from __future__ import annotations

import gin
import pytest
import torch

from tests.training.conftest import FAST
from tvrl_bench.config import load_config
from tvrl_bench.credit.weights import MERGED, PER_CHECK, CreditWeights
from tvrl_bench.objectives.kl import stepwise_kl
from tvrl_bench.objectives.losses import credit_weighted_grpo_loss
from tvrl_bench.objectives.official import OfficialTVRL
from tvrl_bench.objectives.per_check import per_check_ratio_loss, question_advantages
from tvrl_bench.objectives.step_rewards import StepRewards
from tvrl_bench.training import loop
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.settings import TrialSettings


def test_loss_is_the_per_check_loss_plus_the_adaptive_kl_mix():
    g = torch.Generator().manual_seed(0)
    new, old = torch.randn(2, 1, 6, generator=g) * 0.01, torch.zeros(2, 1, 6)
    w = torch.rand(2, 3, 6, generator=g)
    w[1, 2] = 0  # a missing check
    adv, kl = torch.tensor([1.0, -0.5]), torch.tensor([[0.2], [0.4]])
    objective = OfficialTVRL(kl_min_coef=1e-3, kl_target=1e-2, kl_max_coef=1e-2)
    loss, stats = objective.loss(new, old, adv, CreditWeights.of_checks(w.mean(dim=1), w), kl)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    policy, _ = per_check_ratio_loss(new, old, adv, w, mask, 1e-4)
    mix = 1.0 * kl.mean() + 0.1 * stepwise_kl(old, new).mean()
    torch.testing.assert_close(loss, policy + 1e-3 * mix)
    assert float(stats["kl_coef"]) == pytest.approx(1e-3)
    merged = OfficialTVRL(mode="merged_gradient", kl="none")
    flat = torch.rand(2, 6, generator=g)
    torch.testing.assert_close(merged.loss(new, old, adv, CreditWeights(flat))[0],
                               credit_weighted_grpo_loss(new, old, adv, flat)[0])


def test_moving_reference_refreshes_every_n_updates_and_round_trips():
    p = torch.nn.Parameter(torch.zeros(3))
    objective = OfficialTVRL(refresh_every=2)
    assert not objective.reference.keeps_policy_copy  # its reference is its own snapshot
    objective.reference.bind([p])
    with torch.no_grad():
        p.add_(1.0)
    with objective.reference.context(None):
        assert torch.equal(p, torch.zeros(3))  # the reference: the initial weights
    assert torch.equal(p, torch.ones(3))
    objective.after_update({"kl": 0.0})
    with objective.reference.context(None):
        assert torch.equal(p, torch.zeros(3))
    objective.after_update({"kl": 0.0})  # second update: reloaded from the policy
    with objective.reference.context(None):
        assert torch.equal(p, torch.ones(3))
    clone = OfficialTVRL(refresh_every=2)
    clone.reference.bind([torch.nn.Parameter(torch.zeros(3))])
    clone.load_state_dict(objective.state_dict())
    assert clone.updates == 2 and torch.equal(clone.reference.moving.snapshot[0], torch.ones(3))
    assert clone.controller.coef == objective.controller.coef



def test_the_reference_state_is_kept_once_bound():
    """Checkpoint content as before the reference became a part: `moving` only once the snapshot exists."""
    unbound = OfficialTVRL()
    assert "moving" not in unbound.state_dict() and OfficialTVRL(kl="none").reference is None
    bound = OfficialTVRL()
    bound.reference.bind([torch.nn.Parameter(torch.full((2,), 3.0))])
    state = bound.state_dict()
    assert set(state) == {"updates", "controller", "moving"} and torch.equal(state["moving"]["snapshot"][0],
                                                                            torch.full((2,), 3.0))
    unbound.load_state_dict(state)  # nothing bound to restore into: the state is left alone
    assert unbound.reference.moving is None and unbound.reference.state_dict() == {}
    no_kl = OfficialTVRL(kl="none")
    no_kl.load_state_dict(state)
    assert set(no_kl.state_dict()) == {"updates", "controller"}

@pytest.mark.parametrize("bindings", [
    ["objectives.tvrl_official.mode = 'question'", "CREDIT = @credit.uniform()"],
    ["objectives.tvrl_official.mode = 'video_adv'", "training.trial.optimizer = @training.optimizer()",
     "training.optimizer.kind = 'muon_adamw'", "training.schedule.balance = True"],
])
def test_toy_trials_train_with_the_official_objective(tmp_path, bindings):
    load_config(["components/profiles/toy_v1.gin", "components/objectives/tvrl_official.gin"], FAST + bindings)
    settings = TrialSettings()
    gin.clear_config()
    trainer = loop.Trainer(settings, Processes(cpu=True), CheckpointDir(tmp_path), None, progress=False)
    before = [p.detach().clone() for p in trainer.parameters]
    batch = trainer.collect(0)
    k = batch.scored.mask.shape[1]
    assert batch.weights.layout == PER_CHECK
    checks, mask = batch.weights.by_check()
    if settings.objective.mode == "question":
        assert batch.advantages.shape == (4, k) and checks.shape[1] == 1
    else:
        assert checks.shape[:2] == (4, k)
        zero = ~batch.scored.mask
        assert (checks[zero.to(checks.device)] == 0).all() and torch.equal(mask, ~zero)
    out = trainer.step(1)
    assert torch.isfinite(torch.tensor(out.metrics["train/loss"])) and out.metrics["train/kl_coef"] > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.parameters))
    assert settings.objective.updates == 1


def test_its_parts_follow_its_mode_and_kl():
    assert OfficialTVRL().credit_layout == PER_CHECK and OfficialTVRL(mode="question").credit_layout == PER_CHECK
    assert OfficialTVRL(mode="merged_gradient").credit_layout == MERGED
    assert OfficialTVRL(kl="none").reference is None
    adv, groups = torch.tensor([1.0, -1.0, 0.5, -0.5]), torch.tensor([0, 0, 1, 1])
    scores = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.0], [0.2, 0.0]])
    mask = torch.tensor([[True, True], [True, True], [True, False], [True, False]])

    def no_gather():
        raise AssertionError("gathered the checks' scores, which only mode 'question' uses")

    assert OfficialTVRL().advantages(StepRewards(adv, groups, None, no_gather)) is adv
    question = OfficialTVRL(mode="question").advantages(StepRewards(adv, groups, None, lambda: (scores, mask)))
    torch.testing.assert_close(question, question_advantages(scores, groups, mask), rtol=0, atol=0)


def test_the_official_null_control_gives_each_rollout_another_group_members_row_of_advantages():
    from tvrl_bench.objectives.official import OfficialTVRLNull
    from tvrl_bench.objectives.step_rewards import StepRewards

    scores = torch.rand(8, 3, generator=torch.Generator().manual_seed(0))
    mask = torch.ones(8, 3, dtype=torch.bool)
    groups = torch.arange(2).repeat_interleave(4)

    def step() -> StepRewards:
        return StepRewards(torch.randn(8), groups, torch.Generator().manual_seed(1), lambda: (scores, mask))

    real = OfficialTVRL(mode="question", kl="none").advantages(step())
    null = OfficialTVRLNull(mode="question", kl="none").advantages(step())
    assert null.shape == real.shape == (8, 3)
    for g in range(2):
        rows = groups == g
        mine, theirs = real[rows], null[rows]
        assert sorted(map(tuple, mine.tolist())) == sorted(map(tuple, theirs.tolist()))  # the group's rows, moved whole
    assert not torch.equal(real, null)
    assert OfficialTVRLNull.method == "null"
