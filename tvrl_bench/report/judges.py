"""Pairwise judges for win-rate studies: given one prompt and two videos, say which is better.

Contract: `judge(prompt, checks, video_left, video_right) -> "left" | "right" | "tie"` with videos
video[F, 3, H, W] in [0, 1]. A judge only sees left and right (which method is which is hidden from it).
- `judges.evaluator`: backed by any Evaluator (on the toy world the exact evaluator, so the judgment is exact);
  compares the per-video scores of its raw records.
- `judges.vlm`: the pairwise VLM judge over any critic (a `rewards` component): asks it, per video, whether the
  video matches the prompt (or asks the prompt's own checks) and compares the scores.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Sequence

from tvrl_bench import registry
from tvrl_bench.registry import register

if TYPE_CHECKING:  # torch and the contracts load when a judge is built, so `tvrl-report` starts quickly
    import torch

    from tvrl_bench.evaluation.base import Evaluator
    from tvrl_bench.rewards.base import Reward


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


@register("judges", "evaluator")
class EvaluatorJudge(Judge):
    """Pairwise judge backed by an evaluator: the video with the higher per-video score wins."""

    def __init__(self, evaluator: Evaluator, tolerance: float = 1e-6) -> None:
        from tvrl_bench.evaluation.base import Evaluator

        if not isinstance(evaluator, Evaluator):
            raise TypeError(
                f"judges.evaluator needs an Evaluator (e.g. judges.evaluator.evaluator = @evaluators.toy()), "
                f"got {type(evaluator).__name__}"
            )
        if tolerance < 0:
            raise ValueError(f"judges.evaluator.tolerance must be >= 0, got {tolerance}")
        self.evaluator = evaluator
        self.tolerance = tolerance

    def scores(
        self, prompt: str, checks: Sequence[str], video_left: torch.Tensor, video_right: torch.Tensor
    ) -> tuple[float, float]:
        """The evaluator's per-video scores (left, right) from its raw records."""
        import torch

        if video_left.shape == video_right.shape:
            _, raw = self.evaluator.evaluate_detailed(
                torch.stack([video_left, video_right]), [prompt, prompt], [tuple(checks), tuple(checks)]
            )
            by_index = {int(r["index"]): float(r["score"]) for r in raw}
            return by_index[0], by_index[1]
        scores = []
        for video in (video_left, video_right):
            _, raw = self.evaluator.evaluate_detailed(video[None], [prompt], [tuple(checks)])
            scores.append(float(raw[0]["score"]))
        return scores[0], scores[1]

    def judge(
        self, prompt: str, checks: Sequence[str], video_left: torch.Tensor, video_right: torch.Tensor
    ) -> str:
        return compare(*self.scores(prompt, checks, video_left, video_right), self.tolerance)


@register("judges", "vlm")
class CriticJudge(Judge):
    """Pairwise VLM judge: a critic scores how well each video matches the prompt; the higher score wins."""

    def __init__(
        self,
        reward: Reward,
        question: str = "Does this video match the prompt: {prompt}?",
        use_checks: bool = False,
        tolerance: float = 1e-6,
    ) -> None:
        from tvrl_bench.rewards.base import Reward

        if not isinstance(reward, Reward):
            raise TypeError(
                f"judges.vlm needs a reward component (e.g. judges.vlm.reward = @rewards.qwen3_5()), "
                f"got {type(reward).__name__}"
            )
        if "{prompt}" not in question and not use_checks:
            raise ValueError(f"judges.vlm.question must contain '{{prompt}}', got {question!r}")
        self.reward = reward
        self.question = question
        self.use_checks = use_checks
        self.tolerance = tolerance

    def questions(self, prompt: str, checks: Sequence[str]) -> tuple[str, ...]:
        """What the critic is asked about each video: the prompt's checks, or the one templated question."""
        if self.use_checks:
            if not checks:
                raise ValueError(f"judges.vlm.use_checks is set but prompt {prompt!r} has no checks")
            return tuple(checks)
        return (self.question.format(prompt=prompt),)

    def scores(
        self, prompt: str, checks: Sequence[str], video_left: torch.Tensor, video_right: torch.Tensor
    ) -> tuple[float, float]:
        """Mean critic score of each video over its questions (head-based critics: over their heads)."""
        import torch

        questions = self.questions(prompt, checks)
        device = next((p.device for p in self.reward.parameters()), torch.device("cpu"))
        out = []
        with torch.no_grad():
            for video in (video_left, video_right):
                scores = self.reward.score(video[None].to(device), [prompt], [questions])  # [1, K]
                mask = self.reward.score_mask([questions]).to(scores.device)
                out.append(float((scores * mask).sum() / mask.sum()))
        return out[0], out[1]

    def judge(
        self, prompt: str, checks: Sequence[str], video_left: torch.Tensor, video_right: torch.Tensor
    ) -> str:
        return compare(*self.scores(prompt, checks, video_left, video_right), self.tolerance)
