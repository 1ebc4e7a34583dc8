"""The credit-weighted clipped policy-ratio losses of docs/method.md (pure functions).

Shapes: per-token transition log-probs logp[B, S, N] (S trained transitions, N tokens; each token's log-prob is
the mean of its elements' log-densities), advantages[B], credit weights[B, N] with mean 1 per rollout.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def weighted_log_prob(logp: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """L[B, S] = (1/N) sum_n w_n l_n: the credit-weighted transition log-prob (uniform w gives the element mean)."""
    return (logp * weights.detach()[:, None, :]).mean(dim=-1)


def clipped_surrogate(ratio: torch.Tensor, advantages: torch.Tensor, clip_range: float) -> torch.Tensor:
    """-min(rho A, clip(rho, 1 - eps, 1 + eps) A), elementwise; advantages broadcast against ratio."""
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1 - clip_range, 1 + clip_range) * advantages
    return -torch.minimum(unclipped, clipped)


def ratio_stats(log_ratio: torch.Tensor, clip_range: float) -> dict[str, torch.Tensor]:
    """ratio_mean, clipfrac (share of ratios outside the clip range) and approx_kl (mean of 0.5 log(rho)^2)."""
    log_ratio = log_ratio.detach()
    ratio = torch.exp(log_ratio)
    return {
        "ratio_mean": ratio.mean(),
        "clipfrac": ((ratio - 1).abs() > clip_range).float().mean(),
        "approx_kl": 0.5 * (log_ratio**2).mean(),
    }


def credit_weighted_grpo_loss(
    logp_new: torch.Tensor,
    logp_old: torch.Tensor,
    advantages: torch.Tensor,
    weights: torch.Tensor,
    clip_range: float = 1e-4,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """TVRL's loss: one ratio per transition from credit-weighted log-probs, clipped as in Flow-GRPO.

    rho[B, S] = exp(L_new - L_old) with L = weighted_log_prob; loss = mean over (i, t) of the clipped surrogate.
    With weights == 1 this is exactly Flow-GRPO's loss.
    """
    log_ratio = weighted_log_prob(logp_new, weights) - weighted_log_prob(logp_old.detach(), weights)
    loss = clipped_surrogate(torch.exp(log_ratio), advantages[:, None], clip_range).mean()
    return loss, ratio_stats(log_ratio, clip_range)


def per_token_ratio_loss(
    logp_new: torch.Tensor,
    logp_old: torch.Tensor,
    advantages: torch.Tensor,
    weights: torch.Tensor,
    clip_range: float = 1e-4,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Variant: clip each token's own ratio rho[B, S, N] = exp(l_new - l_old), then average weighted by w."""
    log_ratio = logp_new - logp_old.detach()
    surrogate = clipped_surrogate(torch.exp(log_ratio), advantages[:, None, None], clip_range)
    loss = (surrogate * weights.detach()[:, None, :]).mean()
    return loss, ratio_stats(log_ratio, clip_range)


def gaussian_mean_kl(mean: torch.Tensor, mean_ref: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
    """KL between two Gaussians of equal variance per element, (mu - mu_ref)^2 / (2 Var), averaged per sample [B].

    mean, mean_ref: [B, ...] transition means of the policy and the reference policy; var broadcastable.
    """
    kl = (mean.to(torch.float32) - mean_ref.detach().to(torch.float32)) ** 2 / (2 * var)
    return kl.reshape(kl.shape[0], -1).mean(dim=1)


@dataclass
class GuardTerms:
    """Per trained transition and token: shift[B, S, N] = mean over the token's elements of (mu - mu_old)^2 (the
    transition mean now against at sampling time; with gradients), std[B, S, N] = sqrt(Var) of the step."""

    shift: torch.Tensor
    std: torch.Tensor


def guarded_grpo_loss(logp_new: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor,
                      weights: torch.Tensor, guard: GuardTerms,
                      clip_range: float) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """GRPO-Guard's loss (objectives/guard.py): logp[B, S, N], advantages[B], weights[B, N]; mean over (i, t) of
    -min(rho A, clip(rho) A) with log rho = (1/N) sum_n w_n (std_n (l_new,n - l_old,n) + shift_n / (2 std_n))."""
    per_token = guard.std * (logp_new - logp_old.detach()) + guard.shift / (2 * guard.std)
    log_ratio = weighted_log_prob(per_token, weights)
    loss = clipped_surrogate(torch.exp(log_ratio), advantages[:, None], clip_range).mean()
    return loss, ratio_stats(log_ratio, clip_range)
