"""Scores with gradient maps for the answer-likelihood critic (`rewards.qwen_vl`): per-check or joint scoring
units, maps w.r.t. the video pixels or the critic's own input patches (the official TVRL credit source).

A unit is one sequence: a (video, check) pair in "per_check" mode, a video with all its checks in "joint" mode
(rewards/qwen/joint.py). Units are scored in batches of `batch_size`; each batch is one forward with one
gradient call per check index.
"""

from __future__ import annotations

import torch

from tvrl_bench.rewards.qwen.answer_prompts import AnswerPrompts
from tvrl_bench.rewards.qwen.answer_scorer import AnswerScorer
from tvrl_bench.rewards.qwen.credit import patch_credit
from tvrl_bench.rewards.qwen.prompt_encoder import VideoPromptEncoder

Unit = tuple[int, list[int]]  # (video index, the indices of the checks the unit scores)


class ScoreMaps:
    """Scores [B, K] of videos' checks in scoring units, with |d score / d input| maps where asked."""

    def __init__(
        self, scorer: AnswerScorer, encoder: VideoPromptEncoder, prompts: AnswerPrompts, joint: bool, batch_size: int
    ) -> None:
        """
        Args:
            scorer: the teacher-forced forward (scores of picked suffix tokens).
            encoder: its input builder (video preprocessing; merge size of the patch grid).
            prompts: the chat texts and reference answer of a unit.
            joint: one unit per video with all its checks (else one per (video, check)).
            batch_size: units per forward.
        """
        self.scorer = scorer
        self.encoder = encoder
        self.prompts = prompts
        self.joint = joint
        self.batch_size = batch_size

    def units(self, questions: list[list[str]], b: int) -> list[Unit]:
        """The scoring units of the first b videos, questions[i] the checks of video i, in scoring order."""
        if self.joint:
            return [(i, list(range(len(questions[i])))) for i in range(b)]
        return [(i, [j]) for i in range(b) for j in range(len(questions[i]))]

    def unit_texts(
        self, batch: list[Unit], prompts: list[str], questions: list[list[str]]
    ) -> tuple[list[str], list[list[int]], list[list[list[int]]]]:
        """(chat texts, answer suffix ids, per-score picks into the suffix) for a batch of units."""
        texts: list[str] = []
        suffixes: list[list[int]] = []
        picks: list[list[list[int]]] = []
        answer_ids = self.prompts.answer_ids
        for i, js in batch:
            if self.joint:
                text, ids, positions = self.prompts.joint_text(prompts[i], questions[i])
                texts.append(text)
                suffixes.append(ids)
                picks.append([[p] for p in positions])
            else:
                texts.append(self.prompts.pair_text(prompts[i], questions[i][js[0]]))
                suffixes.append(list(answer_ids))
                picks.append([list(range(len(answer_ids)))])
        return texts, suffixes, picks

    def __call__(
        self, video: torch.Tensor, prompts: list[str], questions: list[list[str]], space: str | None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(scores[B, K], maps or None) for video[B, F, 3, H, W] in [0, 1] and questions[i] the checks of video i.

        space None: scores only; "pixels": maps[B, K, F, H, W] = |d score_k / d video| summed over colour;
        "critic": maps[B, K, Tc, Hc, Wc] = |d score_k / d patches| summed per patch, merge packing undone
        (rewards/qwen/credit.py).
        """
        b, k = len(prompts), max((len(q) for q in questions), default=0)
        units = self.units(questions, b)
        scores = torch.zeros(b, k)
        maps: torch.Tensor | None = None
        for start in range(0, len(units), self.batch_size):
            batch = units[start : start + self.batch_size]
            rows = video[torch.tensor([i for i, _ in batch])].to(self.scorer.device)
            leaf = rows.clone().requires_grad_(True) if space == "pixels" else rows
            inputs = self.encoder.preprocess(leaf)
            if space == "critic":
                inputs.pixel_values_videos = inputs.pixel_values_videos.detach().requires_grad_(True)
                leaf = inputs.pixel_values_videos
            per_unit = self.scorer.suffix_scores(inputs, *self.unit_texts(batch, prompts, questions))
            for (i, js), unit_scores in zip(batch, per_unit):
                scores[i, js] = unit_scores.detach().float().cpu()
            if space is None:
                continue
            width = max(len(js) for _, js in batch)
            for g in range(width):
                total = sum(u[g] for u in per_unit if len(u) > g)
                (grad,) = torch.autograd.grad(total, leaf, retain_graph=g < width - 1)
                if space == "pixels":
                    unit_maps = list(grad.abs().sum(dim=2).float())
                else:
                    unit_maps = patch_credit(grad, inputs.video_grid_thw, self.encoder.video_settings.merge_size)
                if maps is None:
                    maps = torch.zeros(b, k, *unit_maps[0].shape)
                for (i, js), m in zip(batch, unit_maps):
                    if len(js) > g:
                        maps[i, js[g]] = m.cpu()
        return scores.to(video.device), None if maps is None else maps.to(video.device)
