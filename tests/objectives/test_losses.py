"""The credit-weighted loss against Flow-GRPO's plain loss, and gradient flow through log-probs only."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tvrl_bench.objectives import (
    credit_weighted_grpo_loss,
    gaussian_mean_kl,
    per_token_ratio_loss,
)
from tvrl_bench.credit.weights import CreditWeights
from tvrl_bench.objectives.grpo import CreditWeightedGRPO


def flow_grpo_loss(logp_new_elem, logp_old_elem, adv, clip):
    """Flow-GRPO: log-prob averaged over all elements of a transition, one ratio per transition."""
    new = logp_new_elem.reshape(*logp_new_elem.shape[:2], -1).mean(-1)
    old = logp_old_elem.reshape(*logp_old_elem.shape[:2], -1).mean(-1)
    ratio = torch.exp(new - old)
    a = adv[:, None]
    return torch.mean(torch.maximum(-a * ratio, -a * torch.clamp(ratio, 1 - clip, 1 + clip)))


def test_uniform_credit_equals_the_plain_grpo_loss():
    gen = torch.Generator().manual_seed(0)
    b, s, n, per_token = 4, 3, 16, 6
    elem_old = torch.randn(b, s, n, per_token, generator=gen) - 2
    elem_new = elem_old + 1e-3 * torch.randn(b, s, n, per_token, generator=gen)
    adv = torch.randn(b, generator=gen)
    # per-token log-prob = mean over the token's elements (equal-sized tokens)
    loss, stats = credit_weighted_grpo_loss(elem_new.mean(-1), elem_old.mean(-1), adv, torch.ones(b, n), clip_range=2e-4)
    expected = flow_grpo_loss(elem_new, elem_old, adv, 2e-4)
    torch.testing.assert_close(loss, expected, rtol=1e-6, atol=1e-7)
    assert 0.0 <= float(stats["clipfrac"]) <= 1.0


def test_weighted_loss_matches_an_independent_computation():
    rng = np.random.default_rng(1)
    b, s, n = 3, 2, 5
    new, old = rng.normal(size=(b, s, n)), rng.normal(size=(b, s, n))
    w = rng.uniform(0, 2, size=(b, n))
    w /= w.mean(axis=1, keepdims=True)
    adv = rng.normal(size=b)
    clip = 0.2
    expected = 0.0
    for i in range(b):
        for t in range(s):
            rho = np.exp(np.mean(w[i] * new[i, t]) - np.mean(w[i] * old[i, t]))
            expected += -min(rho * adv[i], np.clip(rho, 1 - clip, 1 + clip) * adv[i])
    expected /= b * s
    t = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731
    loss, _ = credit_weighted_grpo_loss(t(new), t(old), t(adv), t(w), clip_range=clip)
    assert float(loss) == pytest.approx(expected, rel=1e-10)


def test_gradients_reach_the_log_probs_but_never_the_weights():
    logp_new = torch.randn(2, 3, 8, requires_grad=True)
    weights = torch.rand(2, 8, requires_grad=True)
    for fn in (credit_weighted_grpo_loss, per_token_ratio_loss):
        logp_new.grad = None
        loss, _ = fn(logp_new, logp_new.detach().clone(), torch.tensor([1.0, -1.0]), weights / weights.mean(1, keepdim=True), 0.2)
        loss.backward()
        assert logp_new.grad is not None and logp_new.grad.abs().sum() > 0
        assert weights.grad is None


def test_credit_moves_the_gradient_to_credited_tokens():
    logp_new = torch.zeros(1, 1, 4, requires_grad=True)
    weights = torch.tensor([[4.0, 0.0, 0.0, 0.0]])
    loss, _ = credit_weighted_grpo_loss(logp_new, logp_new.detach(), torch.tensor([1.0]), weights, 0.2)
    loss.backward()
    assert logp_new.grad[0, 0, 0] < 0 and torch.all(logp_new.grad[0, 0, 1:] == 0)


def test_per_token_variant_matches_an_independent_computation():
    rng = np.random.default_rng(2)
    new, old = rng.normal(size=(2, 2, 3)) * 0.1, rng.normal(size=(2, 2, 3)) * 0.1
    w = np.array([[0.5, 1.0, 1.5], [1.0, 1.0, 1.0]])
    adv, clip = np.array([0.7, -1.2]), 0.05
    rho = np.exp(new - old)
    surr = -np.minimum(rho * adv[:, None, None], np.clip(rho, 1 - clip, 1 + clip) * adv[:, None, None])
    expected = (surr * w[:, None, :]).mean()
    t = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731
    loss, _ = per_token_ratio_loss(t(new), t(old), t(adv), t(w), clip)
    assert float(loss) == pytest.approx(expected, rel=1e-10)


def test_ratio_is_exactly_one_and_loss_is_minus_mean_advantage_when_nothing_changed():
    logp = torch.randn(3, 2, 5)
    adv = torch.tensor([1.0, 2.0, -0.5])
    loss, stats = credit_weighted_grpo_loss(logp, logp.clone(), adv, torch.rand(3, 5) + 0.5, 1e-4)
    assert float(stats["ratio_mean"]) == 1.0 and float(stats["approx_kl"]) == 0.0
    assert float(loss) == pytest.approx(-float(adv.mean()))


def test_kl_term_is_added_with_its_weight():
    mean, mean_ref = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    var = torch.tensor(0.25)
    kl = gaussian_mean_kl(mean, mean_ref, var)
    expected = ((mean - mean_ref) ** 2 / 0.5).reshape(2, -1).mean(1)
    torch.testing.assert_close(kl, expected)
    objective = CreditWeightedGRPO(clip_range=0.2, kl_beta=0.5)
    logp = torch.randn(2, 1, 4)
    weights = CreditWeights(torch.ones(2, 4))
    base, _ = CreditWeightedGRPO(clip_range=0.2).loss(logp, logp, torch.ones(2), weights)
    with_kl, stats = objective.loss(logp, logp, torch.ones(2), weights, kl=kl[:, None])
    torch.testing.assert_close(with_kl, base + 0.5 * kl.mean())
    with pytest.raises(ValueError, match="kl_beta > 0"):
        objective.loss(logp, logp, torch.ones(2), weights)


def test_a_kl_term_brings_the_pretrained_policy_as_its_reference():
    assert CreditWeightedGRPO().reference is None  # no KL term: nothing to bind, no reference forward

    class Policy:
        def reference(self):
            return "the pretrained copy's context"

    reference = CreditWeightedGRPO(kl_beta=0.1).reference
    assert reference.keeps_policy_copy and reference.context(Policy()) == "the pretrained copy's context"
