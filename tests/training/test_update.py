"""The policy-gradient pass: the first ratio is exactly 1, and a drifted policy is caught before any update."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.objectives.grpo import CreditWeightedGRPO
from tvrl_bench.policies.toy import ToyPolicy
from tvrl_bench.samplers.flow import FlowSampler
from tvrl_bench.training.schedule import Schedule
from tvrl_bench.training.rollout import sample_rollouts
from tvrl_bench.training.update import RatioCheckError, accumulate_policy_gradient

PROMPTS = ["a red circle moving right on a black background"] * 2 + ["a blue square moving up on a white background"] * 2


def setup(path, shuffle=True):
    policy = ToyPolicy(path)
    sampler = FlowSampler()
    schedule = Schedule(num_steps=4, shuffle=shuffle)
    cond = policy.encode(PROMPTS)
    rollout = sample_rollouts(policy, sampler, schedule, cond, 4, torch.Generator().manual_seed(0), micro_batch=2)
    return policy, sampler, cond, rollout


def test_recomputed_log_probs_give_ratio_exactly_one_and_gradients(tiny_policy_path):
    policy, sampler, cond, rollout = setup(tiny_policy_path)
    weights = torch.rand(4, 256) + 0.5
    weights /= weights.mean(dim=1, keepdim=True)
    stats = accumulate_policy_gradient(
        policy, sampler, CreditWeightedGRPO(), rollout, cond, torch.arange(4),
        torch.tensor([1.0, -1.0, 0.5, -0.5]), weights, micro_batch=2, check_ratio_tolerance=0.0,
    )
    assert stats["ratio_mean"] == pytest.approx(1.0, abs=1e-12) and stats["clipfrac"] == 0.0
    grads = [p.grad for p in policy.trainable_parameters() if p.grad is not None]
    assert grads and sum(float(g.abs().sum()) for g in grads) > 0


def test_a_policy_that_changed_since_the_rollout_is_a_clear_error(tiny_policy_path):
    policy, sampler, cond, rollout = setup(tiny_policy_path)
    with torch.no_grad():
        policy.transformer.proj_out.bias.add_(1e-3)
    with pytest.raises(RatioCheckError, match="ratio must be exactly 1"):
        accumulate_policy_gradient(
            policy, sampler, CreditWeightedGRPO(), rollout, cond, torch.arange(4),
            torch.ones(4), torch.ones(4, 256), micro_batch=2, check_ratio_tolerance=0.0,
        )
    assert all(p.grad is None for p in policy.trainable_parameters())


def test_balance_factors_scale_each_transition_like_its_loss(tiny_policy_path):
    """A per-step factor c multiplies that transition's gradient by c (applied through the advantage)."""
    policy, sampler, cond, rollout = setup(tiny_policy_path, shuffle=False)
    weights = torch.ones(4, 256)
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
