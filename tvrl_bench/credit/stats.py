"""Statistics of credit maps for logging."""

from __future__ import annotations

import math

import torch


def credit_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Normalised entropy [B] of each rollout's credit map weights[B, ...] (>= 0).

    1 means uniform credit (GRPO); lower means credit concentrated on fewer tokens; 0 means a single token.
    """
    flat = weights.detach().reshape(weights.shape[0], -1).to(torch.float32).clamp_min(0)
    n = flat.shape[1]
    if n <= 1:
        return torch.ones(flat.shape[0])
    p = flat / flat.sum(dim=1, keepdim=True).clamp_min(1e-30)
    h = -(p * torch.log(p.clamp_min(1e-30))).sum(dim=1)
    return h / math.log(n)
