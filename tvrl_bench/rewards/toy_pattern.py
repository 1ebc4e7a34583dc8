"""`toy_pattern`: a hacking control, a critic that rewards a pixel pattern the toy evaluator does not ask about.

Every check of a video scores the same thing: the mean brightness of the video's top-left corner patch (the
first `fraction` of its height and width, every frame, every channel), in [0, 1]. No prompt asks for a bright
corner and the exact toy evaluator (`evaluators.toy`) never looks for one, so a policy trained on this critic
raises `eval/critic_reward` while `eval/overall` stays flat or falls: reward hacking by construction. The study
page's reward-hacking panel (`tvrl_bench/report/study_page/`) flags such a method; `tests/report/` trains on it
to check the flag. It is differentiable (its gradient map is the corner patch), so every credit router works.
"""

from __future__ import annotations

import torch

from tvrl_bench.config.rules import Checks, number
from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward


@register("rewards", "toy_pattern")
class ToyPattern(Reward):
    """Scores every check of a video by the mean brightness of its top-left corner patch (ignores the prompt)."""

    score_space = "prob"  # in [0, 1], like a probability of "yes"
    worlds = None  # it reads no check: any world

    CHECKS = Checks(fraction=number(0, 1, low_open=True, example="0.25", note="the patch's side, of the frame's"))

    def __init__(self, fraction: float = 0.25) -> None:
        """fraction: the patch's side as a fraction of the frame's height and width (0 < fraction <= 1)."""
        super().__init__()
        self.fraction = float(fraction)
        self.freeze()

    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """Scores [P]: the mean of videos[p, :, :, :h, :w] with h, w the patch's side in pixels (at least 1)."""
        if videos.dim() != 5 or videos.shape[2] != 3:
            raise ValueError(f"rewards.toy_pattern expects videos[P, F, 3, H, W], got shape {tuple(videos.shape)}")
        h = max(1, round(videos.shape[3] * self.fraction))
        w = max(1, round(videos.shape[4] * self.fraction))
        return videos[:, :, :, :h, :w].clamp(0, 1).mean(dim=(1, 2, 3, 4))
