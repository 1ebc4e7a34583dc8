"""`toy_verdicts`: the exact toy evaluator's per-check verdicts as the reward (a rule reward; no gradient).

Check k of video i scores 1.0 when the toy evaluator (`evaluators.toy`) answers it "yes", else 0.0, judged by
the evaluator's own code (`ToyEvaluator.verdicts`: palette segmentation, components, shapes, tracks), so the
reward is exactly the metric the trial is evaluated with. It is Flow-GRPO's GenEval-style reward on the toy world:
a rollout's reward R_i is the fraction of its prompt's checks it passes. It is not differentiable (`grad_spaces`
is empty): credit comes from another critic, e.g. `toy_oracle`'s maps through `rewards.combined`
(components/rewards/toy_verdicts.gin), or from a router that needs no gradients (`credit.uniform`).
"""

from __future__ import annotations

import torch

from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward
from tvrl_bench.world.checks import parse_check


@register("rewards", "toy_verdicts")
class ToyVerdicts(Reward):
    """The exact toy evaluator's per-check verdicts (1 pass, 0 fail) as the reward; not differentiable."""

    score_space = "prob"  # a verdict is a 0/1 probability of "yes"
    grad_spaces: tuple[str, ...] = ()  # no gradient: a rule reward
    scores_jointly = True  # one segmentation per video answers all its checks
    worlds = ("slots", "sprites")  # the exact evaluator answers both worlds' checks

    def __init__(self, evaluator: ToyEvaluator | None = None) -> None:
        """evaluator: the toy evaluator whose verdicts are the scores (default `evaluators.toy` with its defaults;
        the preset passes `@evaluators.toy()`, so it judges with the trial's evaluator settings)."""
        super().__init__()
        if evaluator is not None and not isinstance(evaluator, ToyEvaluator):
            raise ValueError(f"rewards.toy_verdicts.evaluator must be the toy evaluator (@evaluators.toy()), got "
                             f"{type(evaluator).__name__}")
        self.evaluator = evaluator if evaluator is not None else ToyEvaluator()
        self.freeze()

    def score(self, video: torch.Tensor, prompts: list[str],
              checks: list[list[str]] | list[tuple[str, ...]]) -> torch.Tensor:
        """Verdicts [B, K] (1.0 pass, 0.0 fail; 0 beyond a prompt's checks) for video[B, F, 3, H, W] in [0, 1]."""
        if video.dim() != 5 or video.shape[2] != 3:
            raise ValueError(f"rewards.toy_verdicts expects video[B, F, 3, H, W], got shape {tuple(video.shape)}")
        if not len(prompts) == len(checks) == video.shape[0]:
            raise ValueError(f"rewards.toy_verdicts: {video.shape[0]} videos, {len(prompts)} prompts and "
                             f"{len(checks)} check lists")
        array = video.detach().to("cpu", torch.float32).numpy()
        out = torch.zeros(len(checks), int(self.score_mask(checks).shape[1]))
        for i, questions in enumerate(checks):
            specs = [parse_check(q) for q in questions]
            out[i, : len(specs)] = torch.tensor(self.evaluator.verdicts(array[i], specs), dtype=torch.float32)
        return out.to(video.device)

    def score_with_maps(self, video: torch.Tensor, prompts: list[str], checks: list,
                        space: str | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        if space is not None:
            raise ValueError(f"rewards.toy_verdicts is not differentiable: it gives no '{space}' gradient maps; route "
                             "credit from another critic (rewards.combined.credit_from) or use credit.uniform")
        return self.score(video, prompts, checks), None

    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """Verdicts [P], one (video, question) pair each (no gradient reaches `videos`)."""
        return self.score(videos, prompts, [[q] for q in questions])[:, 0]
