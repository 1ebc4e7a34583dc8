"""The flow-matching pass and the new objectives in real toy trials: chunking, resume, the guard's kept means."""

from __future__ import annotations

import signal

import gin
import pytest
import torch

from tests.training.conftest import FAST
from tvrl_bench.config import load_config
from tvrl_bench.training.loop import Hooks, StopRequested, Trainer
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.step.matching import accumulate_matching_gradient
from tvrl_bench.training.checkpoint import CheckpointDir

OBJECTIVES = ["nft", "awm", "dpo", "grpo_guard"]


def trainer(policy_path: str, folder, preset: str, *bindings: str, hooks: Hooks | None = None) -> Trainer:
    load_config(["components/profiles/toy_v1.gin", f"components/objectives/{preset}.gin"],
                [*FAST, f"policies.toy.path = '{policy_path}'", *bindings])
    settings = TrialSettings()
    gin.clear_config()
    return Trainer(settings, Processes(cpu=True), CheckpointDir(folder), "run-1", hooks, progress=False)


@pytest.mark.parametrize("preset", ["nft", "dpo"])
def test_the_matching_gradient_does_not_depend_on_the_micro_batch(tiny_policy_path, tmp_path, preset):
    t = trainer(tiny_policy_path, tmp_path, preset, "training.trial.group_size = 4")
    batch = t.collect(0)
    rows = torch.arange(len(batch.prompts))
    groups = batch.all_groups
    if preset == "dpo":  # every group with a preference, so both micro-batches see the same pairs
        batch.advantages = torch.arange(len(rows), dtype=torch.float32) % 4 - 1.5
    grads = []
    for micro_batch in (1, len(rows)):
        t.optimizer.zero_grad(set_to_none=True)
        stats = accumulate_matching_gradient(t.policy, t.s.objective, batch.rollout, batch.cond, rows, groups,
                                             batch.advantages, batch.weights, micro_batch,
                                             torch.Generator().manual_seed(3))
        assert stats["matching_units"] == (2 if preset == "dpo" else 8)
        grads.append(torch.cat([torch.zeros(p.numel()) if p.grad is None else p.grad.flatten() for p in t.parameters]))
    assert grads[0].abs().sum() > 0
    assert float((grads[0] - grads[1]).norm() / grads[0].norm()) < 1e-5  # float32 sums in another order


def test_shared_draws_cancel_what_a_group_has_in_common(tiny_policy_path, tmp_path):
    """Every rollout of a group given the same clean sample: with one noise level and draw per group, the NFT
    gradient is zero, because the group's advantages sum to zero; with a draw per rollout it is not. (Uniform
    credit: window credit weighs each rollout's tokens by its own map, which a shared draw does not cancel.)"""
    norms = {}
    for shared in (False, True):
        t = trainer(tiny_policy_path, tmp_path / str(shared), "nft", "training.trial.group_size = 4",
                    f"objectives.nft.shared_draws = {shared}", "CREDIT = @credit.uniform()")
        batch = t.collect(0)
        groups = batch.all_groups
        rows = torch.arange(len(groups))
        first = torch.stack([rows[groups == g][0] for g in groups])
        batch.rollout.latents[:, -1] = batch.rollout.final[first].clone()
        advantages = torch.tensor([-1.5, -0.5, 0.5, 1.5]).repeat(len(rows) // 4)
        t.optimizer.zero_grad(set_to_none=True)
        accumulate_matching_gradient(t.policy, t.s.objective, batch.rollout, batch.cond, rows, groups, advantages,
                                     batch.weights, len(rows), torch.Generator().manual_seed(5))
        norms[shared] = float(torch.cat([p.grad.flatten() for p in t.parameters if p.grad is not None]).norm())
    assert norms[False] > 0 and norms[True] < 1e-5 * norms[False]


def test_dpo_without_a_preference_in_its_minibatch_leaves_the_gradient_untouched(tiny_policy_path, tmp_path):
    t = trainer(tiny_policy_path, tmp_path, "dpo")
    batch = t.collect(0)
    rows = torch.arange(len(batch.prompts))
    stats = accumulate_matching_gradient(t.policy, t.s.objective, batch.rollout, batch.cond, rows, batch.all_groups,
                                         torch.zeros(len(rows)), batch.weights, 4, torch.Generator().manual_seed(0))
    assert stats == {"loss": 0.0, "matching_units": 0.0}
    assert all(p.grad is None for p in t.parameters)


def test_grpo_guard_keeps_the_sampling_means_and_its_first_ratio_is_one(tiny_policy_path, tmp_path):
    t = trainer(tiny_policy_path, tmp_path, "grpo_guard")
    batch = t.collect(0)
    assert batch.rollout.means is not None and not batch.rollout.graphs
    assert batch.rollout.means.shape[:2] == batch.rollout.log_probs.shape[:2]
    stats = t.policy_gradient(batch, 0)  # no update yet: the policy is the sampling policy
    assert stats["ratio_mean"] == pytest.approx(1.0, abs=1e-6) and stats["clipfrac"] == 0.0


@pytest.mark.parametrize("preset,extra", [(p, ()) for p in OBJECTIVES]
                         + [("nft", ("objectives.nft.old_decay = 0.5",))], ids=OBJECTIVES + ["nft_moving_old"])
def test_a_trial_of_each_objective_trains_and_resumes_to_the_weights_of_one_run_straight_through(
        tiny_policy_path, tmp_path, preset, extra):
    steps = ("training.trial.steps = 3", "training.trial.sample_videos = 0", *extra)
    straight = trainer(tiny_policy_path, tmp_path / "straight", preset, *steps)
    before = {k: v.clone() for k, v in straight.state().items()}
    straight_eval = straight.run(0)
    assert any(not torch.equal(before[k], v) for k, v in straight.state().items())

    def stop_after_first(step, out):
        assert torch.isfinite(torch.tensor(out.metrics["train/loss"]))
        first._request_stop(signal.SIGTERM, None)

    first = trainer(tiny_policy_path, tmp_path / "resumed", preset, *steps, hooks=Hooks(on_step=stop_after_first))
    with pytest.raises(StopRequested):
        first.run(0)
    second = trainer(tiny_policy_path, tmp_path / "resumed", preset, *steps)
    start = second.load_state(CheckpointDir(tmp_path / "resumed").load())
    assert start == 1
    resumed_eval = second.run(start)
    assert all(torch.equal(v, straight.state()[k]) for k, v in second.state().items())
    assert resumed_eval.metrics == straight_eval.metrics
