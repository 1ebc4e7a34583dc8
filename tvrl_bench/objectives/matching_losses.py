"""The flow-matching objectives' losses (pure functions): AWM, DiffusionNFT and Flow-DPO, each with token credit.

Shapes: the policy's velocity v[B, C, T, H, W] at a noised clean sample x = (1 - sigma) x0 + sigma noise, its
target u = noise - x0 [B, C, T, H, W], sigma[B], advantages[B], credit weights w[B, N] with mean 1 per rollout, and
`to_tokens`, which averages an elementwise [B, C, T, H, W] tensor over each token's latent patch -> [B, N]
(tokens.latent_to_tokens). Credit enters as the weighted token mean (1/N) sum_n w_n e_n of a per-token error e; every
token covers the same number of latent elements, so with w = 1 this is the element mean of the published losses.
"""

from __future__ import annotations

from typing import Callable

import torch

from tvrl_bench.objectives.losses import credit_weighted_grpo_loss

ToTokens = Callable[[torch.Tensor], torch.Tensor]
WEIGHTINGS = ("uniform", "t", "t**2")


def credit_mean(per_token: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """(1/N) sum_n w_n e_n [B] of per-token values e[B, N] with credit weights w[B, N] (detached)."""
    return (per_token * weights.detach()).mean(dim=-1)


def _per_sample(sigma: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return sigma.reshape(-1, *[1] * (like.dim() - 1)).to(like.dtype)


def matching_log_prob(v: torch.Tensor, target: torch.Tensor, sigma: torch.Tensor, to_tokens: ToTokens,
                      weighting: str = "uniform") -> torch.Tensor:
    """AWM's per-token log-likelihood surrogate [B, N]: -(v - u)^2 averaged over each token's elements, times sigma
    ('t') or sigma^2 ('t**2') when the weighting says so (computed in float32)."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, got '{weighting}'")
    logp = to_tokens(-(v.float() - target.float()) ** 2)
    power = {"uniform": 0, "t": 1, "t**2": 2}[weighting]
    return logp * sigma.float()[:, None] ** power


def awm_loss(logp_new: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor, weights: torch.Tensor,
             clip_range: float) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Advantage weighted matching: the clipped ratio of objectives.grpo with the matching surrogate as log-prob.

    logp_new, logp_old: `matching_log_prob` [B, N] of the policy and the old policy at the same noised samples.
    rho = exp(L_new - L_old) with L = (1/N) sum_n w_n logp_n; loss = mean -min(rho A, clip(rho) A).
    """
    return credit_weighted_grpo_loss(logp_new[:, None], logp_old[:, None], advantages, weights, clip_range)


def nft_loss(v: torch.Tensor, v_old: torch.Tensor, target: torch.Tensor, sigma: torch.Tensor,
             advantages: torch.Tensor, weights: torch.Tensor, to_tokens: ToTokens, beta: float = 1.0,
             advantage_clip: float = 5.0) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """DiffusionNFT's negative-aware fine-tuning loss with token credit.

    r = clip(clip(A, -c, c) / (2c) + 1/2, 0, 1); implicit policies v+ = beta v + (1 - beta) v_old and
    v- = (1 + beta) v_old - beta v; their clean-sample predictions x0± = x - sigma v± miss x0 by
    d± = x0± - x0 = sigma (u - v±); each squared miss is divided by its rollout's mean |d±| (detached, at least 1e-5):

        loss = c * mean_i [ r_i E+_i + (1 - r_i) E-_i ] / beta,   E±_i = (1/N) sum_n w_in mean_{e in n} d±_e^2 / mean|d±_i|
    """
    r = (advantages.clamp(-advantage_clip, advantage_clip) / advantage_clip / 2 + 0.5).clamp(0, 1)
    s = _per_sample(sigma, v)

    def scaled_error(v_implicit: torch.Tensor) -> torch.Tensor:
        miss = s * (target - v_implicit)
        scale = miss.detach().abs().flatten(1).mean(dim=1).clamp(min=1e-5)
        return credit_mean(to_tokens(miss**2), weights) / scale

    positive = scaled_error(beta * v + (1 - beta) * v_old.detach())
    negative = scaled_error((1 + beta) * v_old.detach() - beta * v)
    per_rollout = (r * positive + (1 - r) * negative) / beta
    loss = (per_rollout * advantage_clip).mean()
    return loss, {"nft_positive": positive.detach().mean(), "nft_negative": negative.detach().mean(),
                  "nft_r": r.detach().mean()}


def dpo_loss(error_w: torch.Tensor, error_l: torch.Tensor, error_ref_w: torch.Tensor, error_ref_l: torch.Tensor,
             beta: float) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Diffusion-DPO on flow matching, for P pairs of a preferred (w) and a rejected (l) sample noised alike.

    error_*[P]: credit-weighted mean squared velocity errors (1/N) sum_n w_n mean_{e in n} (v_e - u_e)^2 of the
    policy and of the frozen reference (detached).
    loss = -mean log sigmoid(-beta / 2 ((E_w - E_ref,w) - (E_l - E_ref,l))).
    """
    inside = -0.5 * beta * ((error_w - error_ref_w.detach()) - (error_l - error_ref_l.detach()))
    loss = -torch.nn.functional.logsigmoid(inside).mean()
    return loss, {"dpo_accuracy": (inside.detach() > 0).float().mean(), "dpo_margin": inside.detach().mean()}


def velocity_error(v: torch.Tensor, target: torch.Tensor, weights: torch.Tensor, to_tokens: ToTokens) -> torch.Tensor:
    """The credit-weighted mean squared velocity error [B]: (1/N) sum_n w_n mean_{e in n} (v_e - u_e)^2."""
    return credit_mean(to_tokens((v.float() - target.float()) ** 2), weights)
