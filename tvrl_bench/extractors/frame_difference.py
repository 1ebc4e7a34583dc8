"""Reward-agnostic feature extractors for the feature-map router."""

from __future__ import annotations

import torch

from tvrl_bench.registry import register


@register("extractors", "frame_difference")
class FrameDifference:
    """Motion saliency: |frame t - frame t-1| summed over colour (frame 0 uses frame 1); no model needed.

    __call__: video[B, F, 3, H, W] -> saliency[B, F, H, W].
    """

    def __call__(self, video: torch.Tensor) -> torch.Tensor:
        if video.shape[1] < 2:
            return torch.zeros(video.shape[:2] + video.shape[3:], device=video.device)
        diff = (video[:, 1:] - video[:, :-1]).abs().sum(dim=2)
        return torch.cat([diff[:, :1], diff], dim=1)
