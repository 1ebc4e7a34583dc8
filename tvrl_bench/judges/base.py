"""The judge contract for win-rate studies: given one prompt and two videos, say which is better.

`judge(prompt, checks, video_left, video_right) -> "left" | "right" | "tie"` with videos video[F, 3, H, W] in
[0, 1]. A judge only sees left and right (which method is which is hidden from it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Sequence

from tvrl_bench import registry

if TYPE_CHECKING:
    import torch


class Judge(ABC):
    """A pairwise judge: which of two videos of the same prompt is better."""

    @abstractmethod
    def judge(
        self, prompt: str, checks: Sequence[str], video_left: torch.Tensor, video_right: torch.Tensor
    ) -> str:
        """"left", "right" or "tie" for video_left[F, 3, H, W] and video_right[F, 3, H, W] in [0, 1]."""


def compare(score_left: float, score_right: float, tolerance: float) -> str:
    """"left" / "right" for the higher score, "tie" when they differ by at most `tolerance`."""
    if abs(score_left - score_right) <= tolerance:
        return "tie"
    return "left" if score_left > score_right else "right"


def judge_label(judge: object) -> str:
    """The registered name of a judge's class ("judges.evaluator"), else its class name."""
    for component in registry.components("judges"):
        if type(judge) is component.target or type(judge).__name__ == getattr(component.target, "__name__", None):
            return component.qualified_name
    return type(judge).__name__

