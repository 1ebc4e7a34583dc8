"""The flow-matching objectives' losses (AWM, DiffusionNFT, Flow-DPO) and GRPO-Guard's ratio, each against an
independent computation written from the published per-sample form, and their token credit."""

from __future__ import annotations

from functools import partial

import pytest
import torch

from tvrl_bench.objectives.losses import GuardTerms, guarded_grpo_loss
from tvrl_bench.objectives.matching_losses import awm_loss, dpo_loss, matching_log_prob, nft_loss, velocity_error
from tvrl_bench.tokens import TokenGrid, latent_to_tokens

GRID = TokenGrid(latent_patch=(1, 2, 2), pixel_patch=(1, 8, 8))
to_tokens = partial(latent_to_tokens, grid=GRID)
B, SHAPE = 4, (3, 2, 4, 4)  # latents [B, C, T, H, W]: tokens 2 x 2 x 2 = 8, each 3 x 1 x 2 x 2 = 12 elements
N = 8


def draw(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x0, noise, v, v_old = (torch.randn(B, *SHAPE, generator=g, dtype=torch.float64) for _ in range(4))
    sigma = torch.tensor([1.0, 0.9, 0.5, 0.2], dtype=torch.float64)
    advantages = torch.tensor([1.5, -0.5, 7.0, -2.0], dtype=torch.float64)
    return x0, noise, v, v_old, sigma, advantages


def uniform() -> torch.Tensor:
    return torch.ones(B, N, dtype=torch.float64)


def on_token(n: int) -> torch.Tensor:
    """Credit concentrated on token n (mean 1 per rollout)."""
    w = torch.zeros(B, N, dtype=torch.float64)
    w[:, n] = N
    return w


def token_elements(x: torch.Tensor, n: int) -> torch.Tensor:
    """The latent elements [B, 12] of token n of x[B, C, T, H, W] (tokens in (t, h, w) row-major order)."""
    t, rest = divmod(n, 4)
    h, w = divmod(rest, 2)
    return x[:, :, t, 2 * h:2 * h + 2, 2 * w:2 * w + 2].reshape(len(x), -1)


def test_awm_with_uniform_credit_is_the_published_clipped_ratio_of_matching_errors():
    x0, noise, v, v_old, sigma, advantages = draw()
    u = noise - x0
    clip = 0.05
    for weighting, power in (("uniform", 0), ("t", 1), ("t**2", 2)):
        logp = matching_log_prob(v, u, sigma, to_tokens, weighting)
        logp_old = matching_log_prob(v_old, u, sigma, to_tokens, weighting)
        loss, _ = awm_loss(logp, logp_old, advantages, uniform(), clip)
        # Flow-Factory's per-sample form: log_prob = -mean (v - u)^2 over every element, times sigma^power
        lp = -((v - u) ** 2).flatten(1).mean(1) * sigma**power
        lp_old = -((v_old - u) ** 2).flatten(1).mean(1) * sigma**power
        ratio = torch.exp(lp - lp_old)
        expected = torch.maximum(-advantages * ratio, -advantages * ratio.clamp(1 - clip, 1 + clip)).mean()
        assert torch.allclose(loss.double(), expected, rtol=1e-5, atol=1e-6), weighting


def test_awm_credit_on_one_token_takes_that_tokens_error_only():
    x0, noise, v, v_old, sigma, advantages = draw(1)
    u = noise - x0
    loss, stats = awm_loss(matching_log_prob(v, u, sigma, to_tokens), matching_log_prob(v_old, u, sigma, to_tokens),
                           advantages, on_token(5), 1e9)  # a clip range that never bites: the plain ratio
    lp = -((token_elements(v, 5) - token_elements(u, 5)) ** 2).mean(1)
    lp_old = -((token_elements(v_old, 5) - token_elements(u, 5)) ** 2).mean(1)
    assert torch.allclose(loss.double(), (-advantages * torch.exp(lp - lp_old)).mean(), rtol=1e-5)


def published_nft(x0, noise, v, v_old, sigma, advantages, beta, clip):
    """DiffusionNFT's per-sample loss written from its x0-prediction form."""
    s = sigma.reshape(-1, 1, 1, 1, 1)
    x = (1 - s) * x0 + s * noise
    r = ((advantages.clamp(-clip, clip) / clip) / 2 + 0.5).clamp(0, 1)
    pos_pred = beta * v + (1 - beta) * v_old
    neg_pred = (1 + beta) * v_old - beta * v
    out = []
    for pred in (pos_pred, neg_pred):
        x0_pred = x - s * pred
        weight = (x0_pred - x0).abs().flatten(1).mean(1).clamp(min=1e-5)
        out.append((((x0_pred - x0) ** 2).flatten(1) / weight[:, None]).mean(1))
    return ((r * out[0] + (1 - r) * out[1]) / beta * clip).mean()


@pytest.mark.parametrize("beta", [1.0, 0.3])
def test_nft_with_uniform_credit_is_the_published_negative_aware_loss(beta):
    x0, noise, v, v_old, sigma, advantages = draw(2)
    loss, stats = nft_loss(v, v_old, noise - x0, sigma, advantages, uniform(), to_tokens, beta, 5.0)
    assert torch.allclose(loss.double(), published_nft(x0, noise, v, v_old, sigma, advantages, beta, 5.0), rtol=1e-10)
    assert 0 <= float(stats["nft_r"]) <= 1


def test_nft_gradient_pulls_the_policy_toward_good_samples_and_away_from_bad_ones():
    x0, noise, _, _, sigma, _ = draw(3)
    u = noise - x0
    v_old = u + 0.1 * torch.randn_like(u)  # an old policy that nearly fits the samples
    for sign in (1.0, -1.0):
        v = v_old.clone().requires_grad_(True)
        advantages = torch.full((B,), sign * 5.0, dtype=torch.float64)
        nft_loss(v, v_old, u, sigma, advantages, uniform(), to_tokens)[0].backward()
        step = -v.grad  # gradient descent's direction
        toward = ((step * (u - v_old)).flatten(1).sum(1) > 0).all()
        assert bool(toward) == (sign > 0)


def test_nft_credit_on_one_token_weighs_that_tokens_miss_against_the_whole_rollouts_scale():
    x0, noise, v, v_old, sigma, advantages = draw(4)
    loss, _ = nft_loss(v, v_old, noise - x0, sigma, advantages, on_token(2), to_tokens, 1.0, 5.0)
    s = sigma.reshape(-1, 1, 1, 1, 1)
    r = ((advantages.clamp(-5, 5) / 5) / 2 + 0.5).clamp(0, 1)
    parts = []
    for pred in (v, 2 * v_old - v):
        miss = s * (noise - x0 - pred)
        parts.append((token_elements(miss, 2) ** 2).mean(1) / miss.abs().flatten(1).mean(1))
    assert torch.allclose(loss.double(), ((r * parts[0] + (1 - r) * parts[1]) * 5).mean(), rtol=1e-10)


def test_dpo_is_the_diffusion_dpo_loss_of_velocity_errors():
    x0, noise, v, v_ref, _, _ = draw(5)
    u = noise - x0
    e, e_ref = velocity_error(v, u, uniform(), to_tokens), velocity_error(v_ref, u, uniform(), to_tokens)
    beta = 3.0
    loss, stats = dpo_loss(e[0::2], e[1::2], e_ref[0::2], e_ref[1::2], beta)
    mse = ((v - u) ** 2).flatten(1).mean(1)
    mse_ref = ((v_ref - u) ** 2).flatten(1).mean(1)
    inside = -beta / 2 * ((mse[0::2] - mse_ref[0::2]) - (mse[1::2] - mse_ref[1::2]))
    expected = -torch.log(1 / (1 + torch.exp(-inside))).mean()
    assert torch.allclose(loss.double(), expected, rtol=1e-6)
    assert float(stats["dpo_accuracy"]) == float((inside > 0).double().mean())
    w = on_token(7)
    e7 = velocity_error(v, u, w, to_tokens)
    assert torch.allclose(e7.double(), ((token_elements(v, 7) - token_elements(u, 7)) ** 2).mean(1), rtol=1e-6)


def test_grpo_guard_with_uniform_credit_is_the_published_regulated_ratio():
    g = torch.Generator().manual_seed(6)
    mean_old = torch.randn(B, *SHAPE, generator=g, dtype=torch.float64)
    mean = mean_old + 0.01 * torch.randn(B, *SHAPE, generator=g, dtype=torch.float64)
    var = torch.tensor([0.04, 0.02, 0.01, 0.005], dtype=torch.float64).reshape(-1, 1, 1, 1, 1)
    x_next = mean_old + var.sqrt() * torch.randn(B, *SHAPE, generator=g, dtype=torch.float64)
    advantages = torch.tensor([1.0, -1.0, 0.5, 2.0], dtype=torch.float64)

    def density(mu):
        return torch.distributions.Normal(mu, var.sqrt().expand_as(mu)).log_prob(x_next)

    shift = (mean - mean_old) ** 2
    guard = GuardTerms(to_tokens(shift)[:, None], to_tokens(var.sqrt().expand_as(shift))[:, None])
    clip = 1e-3
    loss, stats = guarded_grpo_loss(to_tokens(density(mean))[:, None], to_tokens(density(mean_old))[:, None],
                                    advantages, uniform(), guard, clip)
    # Flow-Factory: ratio = exp((logp - logp_old) * sqrt(-dt) std_t + mse / (2 sqrt(-dt) std_t)), per-sample means
    scale = var.sqrt().flatten()
    lp, lp_old = density(mean).flatten(1).mean(1), density(mean_old).flatten(1).mean(1)
    ratio = torch.exp((lp - lp_old) * scale + shift.flatten(1).mean(1) / (2 * scale))
    expected = torch.maximum(-advantages * ratio, -advantages * ratio.clamp(1 - clip, 1 + clip)).mean()
    assert torch.allclose(loss.double(), expected, rtol=1e-9)
    # the regulated log-ratio is mean((mu - mu_old)(x' - mu_old)) / std: centred on zero under the sampling noise
    centred = ((mean - mean_old) * (x_next - mean_old)).flatten(1).mean(1) / scale
    assert torch.allclose(torch.log(ratio), centred, rtol=1e-6, atol=1e-12)
