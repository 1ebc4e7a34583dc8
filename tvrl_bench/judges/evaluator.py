"""`judges.evaluator`: a pairwise judge backed by any Evaluator (on the toy world the exact evaluator, so the
judgment is exact); it compares the per-video scores of the evaluator's raw records."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from tvrl_bench.judges.base import Judge, compare
from tvrl_bench.config.rules import Checks, number
from tvrl_bench.registry import register

if TYPE_CHECKING:  # torch and the contracts load when a judge is built, so `tvrl-report` starts quickly
    import torch

    from tvrl_bench.evaluators.base import Evaluator


@register("judges", "evaluator")
class EvaluatorJudge(Judge):
    """Pairwise judge backed by an evaluator: the video with the higher per-video score wins."""

    CHECKS = Checks(tolerance=number(0, example="1e-6", note="a score difference below it is a tie"))

    def __init__(self, evaluator: Evaluator, tolerance: float = 1e-6) -> None:
        from tvrl_bench.evaluators.base import Evaluator

        if not isinstance(evaluator, Evaluator):
            raise TypeError(
                f"judges.evaluator needs an Evaluator (e.g. judges.evaluator.evaluator = @evaluators.toy()), "
                f"got {type(evaluator).__name__}"
            )
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

