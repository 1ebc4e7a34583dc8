"""The reward contract: a frozen critic that scores (video, question) pairs, differentiable w.r.t. the video.

A question-answering critic asks each prompt's checks ("Is there a red circle?"), so prompt i has K_i scores.
A critic with score heads (VideoAlign's VQ/MQ/TA, a 1-5 score per dimension) names its heads in `score_names`
and sets `uses_checks = False`: then every prompt has the same K scores, one per head.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch
from torch import nn

from tvrl_bench.objectives.advantages import group_advantages


class Reward(nn.Module, ABC):
    """A frozen critic. Subclasses implement `score_pairs`; `score` and the pair expansion are shared."""

    uses_checks: bool = True
    score_names: tuple[str, ...] = ()
    # Input preprocessing the critic declares (for logs and presets): frames sampled, (H, W) size, fps.
    frames: int | None = None
    size: tuple[int, int] | None = None
    fps: float | None = None
    # The lowest score the critic can give (a log-probability floor), or None where it has none; training logs
    # the fraction of check scores sitting at it (no slope there, so no learning signal).
    floor_score: float | None = None
    # What a score is: "log_prob" (log p(Yes), the answer-likelihood critics), "prob" (p(Yes)) or "score" (a head's
    # or a rating's value, not a probability).
    score_space: str = "log_prob"
    # For a "score" critic whose scores are a 0-1 share by training (a scalar scorer fitted to the evaluator's
    # overall): (0.0, 1.0), so that its scores read on the same 0-1 scale as a yes-probability
    # (evaluators/critic_quality.py `yes_probability`); None where a score has no such reading.
    score_range: tuple[float, float] | None = None

    # Where the critic can give gradient maps: "pixels" (d score / d video, every critic) and, for critics that
    # implement `score_with_maps`, "critic" (d score / d the critic's own input patches, [B, K, Tc, Hc, Wc]).
    grad_spaces: tuple[str, ...] = ("pixels",)

    def sampled_frames(self, num_frames: int) -> list[int] | None:
        """The frames of a num_frames-frame video the critic looks at, or None for every frame (the default)."""
        return None

    def score_with_maps(
        self, video: torch.Tensor, prompts: list[str], checks: list, space: str | None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(scores[B, K], maps[B, K, ...] or None when space is None) for critics that score on their own terms.

        Implemented by critics that list "critic" in `grad_spaces` or score all checks of a video jointly
        (`scores_jointly`); the trainer calls `training.scoring.score_videos`, which dispatches here.
        """
        raise NotImplementedError(f"{type(self).__name__} has no score_with_maps")

    scores_jointly: bool = False

    # A reward made of several critics (`rewards.combined`) names them in `critics()`; the trainer scores each on
    # its own (`training.scoring.score_videos`), asks this reward to `combine` their check scores, logs each
    # critic's reward, and takes the credit map from the critic named here.
    credit_from: str | None = None

    def critics(self) -> dict[str, "Reward"]:
        """{name: critic} of a reward made of several critics; {} for a critic scored on its own (the default)."""
        return {}

    def combine(self, scores: dict[str, torch.Tensor]) -> torch.Tensor:
        """A combined reward's check scores [B, K] from each of its critics' [B, K] (see `critics`)."""
        raise NotImplementedError(f"{type(self).__name__} is not made of several critics")

    def group_advantages(self, rewards: torch.Tensor, by_critic: dict[str, torch.Tensor], groups: torch.Tensor,
                         std_mode: str, eps: float, clip: float | None) -> torch.Tensor:
        """The step's group advantages [B] from the rollouts' rewards[B] (every process's), their group ids[B]
        and, for a combined reward, each critic's rewards `by_critic` ({name: [B]}): by default GRPO's
        (`objectives.advantages.group_advantages`) on `rewards`."""
        return group_advantages(rewards, groups, std_mode, eps, clip)

    def freeze(self) -> "Reward":
        """Make every parameter frozen and the module eval-mode; call at the end of `__init__`."""
        for p in self.parameters():
            p.requires_grad_(False)
        return self.eval()

    @abstractmethod
    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """Scores [P] for P pairs: videos[P, F, 3, H, W] in [0, 1], one prompt and one question each.

        Differentiable w.r.t. `videos`; pair p's score depends on videos[p] only.
        """

    def questions(self, checks: list[list[str]] | list[tuple[str, ...]]) -> list[list[str]]:
        """The questions scored for each prompt: its checks, or the score heads for a head-based critic."""
        if self.uses_checks:
            return [list(c) for c in checks]
        return [list(self.score_names) for _ in checks]

    def score_mask(self, checks: list[list[str]] | list[tuple[str, ...]]) -> torch.Tensor:
        """[B, K] True where prompt i has a k-th question (K = the most questions of any prompt)."""
        per_prompt = [len(q) for q in self.questions(checks)]
        k = max(per_prompt) if per_prompt else 0
        return torch.arange(k)[None, :] < torch.tensor(per_prompt)[:, None]

    def pairs(
        self, video: torch.Tensor, prompts: list[str], checks: list[list[str]] | list[tuple[str, ...]]
    ) -> tuple[torch.Tensor, list[str], list[str], torch.Tensor]:
        """Expand B videos into their (video, question) pairs.

        Returns (video index [P], prompts [P], questions [P], flat position [P] in the [B, K] score grid).
        """
        questions = self.questions(checks)
        k = max((len(q) for q in questions), default=0)
        index, pair_prompts, pair_questions, flat = [], [], [], []
        for i, qs in enumerate(questions):
            for j, q in enumerate(qs):
                index.append(i)
                pair_prompts.append(prompts[i])
                pair_questions.append(q)
                flat.append(i * k + j)
        return torch.tensor(index, dtype=torch.long), pair_prompts, pair_questions, torch.tensor(flat, dtype=torch.long)

    def score(
        self, video: torch.Tensor, prompts: list[str], checks: list[list[str]] | list[tuple[str, ...]]
    ) -> torch.Tensor:
        """Scores [B, K] for video[B, F, 3, H, W]; entries beyond a prompt's questions are 0 (see score_mask)."""
        index, pair_prompts, pair_questions, flat = self.pairs(video, prompts, checks)
        b, k = len(prompts), int(self.score_mask(checks).shape[1])
        pair_scores = self.score_pairs(video[index], pair_prompts, pair_questions)
        out = pair_scores.new_zeros(b * k)
        return out.index_put((flat.to(out.device),), pair_scores).reshape(b, k)
