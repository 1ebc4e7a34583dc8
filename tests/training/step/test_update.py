"""The policy-gradient pass: the first ratio is exactly 1, a drifted policy is caught before any update, and the
rollout's kept graph gives the gradient of the recomputed forward."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.credit.weights import CreditWeights
from tvrl_bench.objectives.grpo import CreditWeightedGRPO
from tvrl_bench.policies.toy import ToyPolicy
from tvrl_bench.samplers.flow import FlowSampler
from tvrl_bench.training.schedule import Schedule
from tvrl_bench.training.step.rollout import sample_rollouts
from tvrl_bench.training.step.update import RatioCheckError, accumulate_policy_gradient

PROMPTS = ["a red circle moving right on a black background"] * 2 + ["a blue square moving up on a white background"] * 2


def setup(path, shuffle=True, keep_graph=False, train_fraction=1.0):
    policy = ToyPolicy(path)
    sampler = FlowSampler()
    schedule = Schedule(num_steps=4, shuffle=shuffle, train_fraction=train_fraction)
    cond = policy.encode(PROMPTS)
    rollout = sample_rollouts(policy, sampler, schedule, cond, 4, torch.Generator().manual_seed(0), micro_batch=2,
                              keep_graph=keep_graph)
    return policy, sampler, cond, rollout


def test_recomputed_log_probs_give_ratio_exactly_one_and_gradients(tiny_policy_path):
    policy, sampler, cond, rollout = setup(tiny_policy_path)
    weights = torch.rand(4, 256) + 0.5
    weights /= weights.mean(dim=1, keepdim=True)
    stats = accumulate_policy_gradient(
        policy, sampler, CreditWeightedGRPO(), rollout, cond, torch.arange(4),
        torch.tensor([1.0, -1.0, 0.5, -0.5]), CreditWeights(weights), micro_batch=2, check_ratio_tolerance=0.0,
    )
    assert stats["ratio_mean"] == pytest.approx(1.0, abs=1e-12) and stats["clipfrac"] == 0.0
    grads = [p.grad for p in policy.trainable_parameters() if p.grad is not None]
    assert grads and sum(float(g.abs().sum()) for g in grads) > 0


@pytest.mark.parametrize("keep_graph", [False, True], ids=["recomputed", "kept_graph"])
def test_a_policy_that_changed_since_the_rollout_is_a_clear_error(tiny_policy_path, keep_graph):
    """With a kept graph (which holds the old weights' log-probs) the check still compares a separate forward."""
    policy, sampler, cond, rollout = setup(tiny_policy_path, shuffle=not keep_graph, keep_graph=keep_graph)
    with torch.no_grad():
        policy.transformer.proj_out.bias.add_(1e-3)
    with pytest.raises(RatioCheckError, match="ratio must be exactly 1"):
        accumulate_policy_gradient(
            policy, sampler, CreditWeightedGRPO(), rollout, cond, torch.arange(4),
            torch.ones(4), CreditWeights(torch.ones(4, 256)), micro_batch=2, check_ratio_tolerance=0.0,
        )
    assert all(p.grad is None for p in policy.trainable_parameters())


def test_balance_factors_scale_each_transition_like_its_loss(tiny_policy_path):
    """A per-step factor c multiplies that transition's gradient by c (applied through the advantage)."""
    policy, sampler, cond, rollout = setup(tiny_policy_path, shuffle=False)
    weights = CreditWeights(torch.ones(4, 256))
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5])

    def gradient(balance):
        policy.zero_grad(set_to_none=True)
        accumulate_policy_gradient(policy, sampler, CreditWeightedGRPO(), rollout, cond, torch.arange(4), advantages,
                                   weights, micro_batch=2, balance=balance)
        return torch.cat([p.grad.reshape(-1) for p in policy.trainable_parameters() if p.grad is not None])

    plain = gradient(None)
    steps = rollout.trained[0].tolist()
    scaled = torch.zeros(4)
    scaled[steps] = 2.5
    assert torch.allclose(gradient(scaled), 2.5 * plain, rtol=1e-4, atol=1e-8)
    only_first = torch.zeros(4)
    only_first[steps[0]] = 1.0
    assert not torch.allclose(gradient(only_first), plain)  # the other transitions dropped out


def test_the_kept_graph_gives_the_recomputed_gradient_and_is_used_once(tiny_policy_path):
    policy, sampler, cond, kept = setup(tiny_policy_path, shuffle=False, keep_graph=True, train_fraction=0.5)
    _, _, _, plain = setup(tiny_policy_path, shuffle=False, train_fraction=0.5)
    assert sorted(kept.graphs) == [0, 1] and not plain.graphs  # steps 0-1 of the 3 SDE steps are trained
    assert all(g.requires_grad for g in kept.graphs.values())
    torch.testing.assert_close(kept.latents, plain.latents, rtol=0, atol=0)  # the same samples either way
    torch.testing.assert_close(kept.log_probs, plain.log_probs, rtol=0, atol=0)
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5])
    weights = CreditWeights(torch.rand(4, 256, generator=torch.Generator().manual_seed(1)) + 0.5)

    def gradient(rollout):
        policy.zero_grad(set_to_none=True)
        stats = accumulate_policy_gradient(policy, sampler, CreditWeightedGRPO(), rollout, cond, torch.arange(4),
                                           advantages, weights, micro_batch=2, check_ratio_tolerance=0.0)
        return stats, torch.cat([p.grad.reshape(-1) for p in policy.trainable_parameters() if p.grad is not None])

    stats_plain, recomputed = gradient(plain)
    stats_kept, through_rollout = gradient(kept)
    assert not kept.graphs  # consumed by the update
    torch.testing.assert_close(through_rollout, recomputed, rtol=1e-5, atol=1e-9)
    assert stats_kept == pytest.approx(stats_plain)
    _, again = gradient(kept)  # no graph left: the update recomputes, to the same gradient
    torch.testing.assert_close(again, recomputed, rtol=1e-5, atol=1e-9)


def test_keeping_the_graph_needs_the_same_trained_steps_for_every_rollout(tiny_policy_path):
    with pytest.raises(ValueError, match="shuffle must be False"):
        setup(tiny_policy_path, shuffle=True, keep_graph=True)
