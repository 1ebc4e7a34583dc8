"""Per-check ratios and per-question advantages (the official TVRL objective modes), as pure functions.

Shapes: per-token transition log-probs logp[B, S, N]; per-check credit weights w[B, K, N] (mean 1 per check, i.e.
sum_n w_n / N = 1, so (1/N) sum_n w_n l_n is the official sum_n w'_n l_n with sum w' = 1); mask[B, K] marks real
checks.

- "video_adv": one clipped ratio per check, from that check's map, all with the video's advantage A_i[B];
  the surrogate is averaged over the video's checks (the official default).
- "question": the same per-check ratios, each with its own per-question advantage A_ik[B, K] (`question_advantages`).
The trainer routes per-check weights for an objective whose `credit_layout` is "per_check" (credit/weights.py).
"""

from __future__ import annotations

import torch

from tvrl_bench.objectives.losses import clipped_surrogate, ratio_stats

MODES = ("video_adv", "question")


def per_check_log_probs(logp: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """L[B, S, K] = (1/N) sum_n w_kn l_sn for logp[B, S, N] and weights[B, K, N]."""
    return torch.einsum("bsn,bkn->bsk", logp, weights.detach()) / logp.shape[-1]


def per_check_ratio_loss(
    logp_new: torch.Tensor,
    logp_old: torch.Tensor,
    advantages: torch.Tensor,
    weights: torch.Tensor,
    mask: torch.Tensor | None = None,
    clip_range: float = 1e-4,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Mean over (rollout, transition) of the mean over real checks of the clipped per-check surrogate.

    advantages: [B] (video_adv: shared by the checks) or [B, K] (question: one per check).
    """
    b, k = weights.shape[:2]
    log_ratio = per_check_log_probs(logp_new, weights) - per_check_log_probs(logp_old.detach(), weights)  # [B, S, K]
    adv = advantages[:, None, None] if advantages.dim() == 1 else advantages[:, None, :]
    surrogate = clipped_surrogate(torch.exp(log_ratio), adv, clip_range)
    m = torch.ones(b, k, dtype=surrogate.dtype, device=surrogate.device) if mask is None else mask.to(surrogate)
    per_rollout = (surrogate * m[:, None, :]).sum(dim=-1) / m.sum(dim=-1).clamp_min(1)[:, None]
    return per_rollout.mean(), ratio_stats(log_ratio[m[:, None, :].expand_as(log_ratio) > 0], clip_range)


def question_advantages(
    scores: torch.Tensor, group_ids: torch.Tensor, mask: torch.Tensor | None = None, eps: float = 1e-6, clip: float = 5.0
) -> torch.Tensor:
    """A[B, K]: each check's score against the same check of the group's other rollouts.

    (s_ik - mean over the group of s_.k) / max(population std, eps), clipped to [-clip, clip]; masked entries 0.
    """
    scores = scores.to(torch.float32)
    out = torch.zeros_like(scores)
    for g in torch.unique(group_ids):
        rows = group_ids == g
        s = scores[rows]
        out[rows] = (s - s.mean(dim=0)) / s.std(dim=0, unbiased=False).clamp_min(eps)
    out = out.clamp(-clip, clip)
    return out if mask is None else out * mask.to(out)
