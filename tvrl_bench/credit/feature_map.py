"""Feature-map credit (control): a reward-agnostic saliency map from any feature extractor."""

from __future__ import annotations

from typing import Callable

import torch

from tvrl_bench.config.rules import Checks, odd_integer
from tvrl_bench.credit.base import CreditRouter, normalise
from tvrl_bench.credit.window import window_average
from tvrl_bench.registry import register
from tvrl_bench.tokens import pixels_to_tokens


@register("credit", "feature_map")
class FeatureMapRouter(CreditRouter):
    """Credit from a feature extractor's saliency (e.g. DINOv2), independent of the reward.

    extractor: callable video[B, F, 3, H, W] -> saliency[B, F, H, W] >= 0 at pixel resolution.
    """

    needs_grads = False

    CHECKS = Checks(k=odd_integer("1"))

    def __init__(self, extractor: Callable[[torch.Tensor], torch.Tensor], k: int = 1):
        self.extractor = extractor
        self.k = k

    def __call__(self, grads, video, grid, mask=None):
        with torch.no_grad():
            saliency = self.extractor(video.detach())
            if saliency.shape != video.shape[:2] + video.shape[3:]:
                raise ValueError(
                    f"feature extractor {type(self.extractor).__name__} returned {tuple(saliency.shape)}; "
                    f"expected [B, F, H, W] = {tuple(video.shape[:2] + video.shape[3:])}"
                )
            maps = window_average(pixels_to_tokens(saliency.to(torch.float32).clamp_min(0), grid), self.k)
            return normalise(maps)
