"""`judges.vlm`: the pairwise VLM judge over any critic (a `rewards` component). It asks the critic, per video,
whether the video matches the prompt (or asks the prompt's own checks) and compares the scores."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from tvrl_bench.judges.base import Judge, compare
from tvrl_bench.config.rules import Checks, Relation, Values, number
from tvrl_bench.registry import register

if TYPE_CHECKING:
    import torch

    from tvrl_bench.rewards.base import Reward


def _question_names_the_prompt(v: Values) -> str | None:
    if v["use_checks"] or "{prompt}" in v["question"]:
        return None
    return (f"{v.binding('question')} must contain '{{prompt}}' (the prompt it asks about), e.g. "
            f"{v.name('question')} = 'Does this video match the prompt: {{prompt}}?'; or ask each prompt's checks "
            f"with {v.name('use_checks')} = True")


@register("judges", "vlm")
class CriticJudge(Judge):
    """Pairwise VLM judge: a critic scores how well each video matches the prompt; the higher score wins."""

    CHECKS = Checks([Relation(("question", "use_checks"), _question_names_the_prompt)],
                    tolerance=number(0, example="1e-6", note="a score difference below it is a tie"))

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
                f"judges.vlm needs a reward component (e.g. judges.vlm.reward = @rewards.qwen_vl()), "
                f"got {type(reward).__name__}"
            )
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
