"""The evaluator contract: metrics of generated videos, on the evaluator's native 0-1 scale."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Iterable

import torch


class Evaluator(ABC):
    """Scores a set of videos against their prompts and checks.

    `categories` names the metrics besides "overall" (logged as `eval/<category>`).
    """

    categories: tuple[str, ...] = ()

    @abstractmethod
    def evaluate_detailed(
        self, videos: torch.Tensor, prompts: list[str], checks: list[tuple[str, ...]]
    ) -> tuple[dict[str, float], list[dict[str, Any]]]:
        """(metrics, raw records) for videos[B, F, 3, H, W] in [0, 1].

        metrics: {"overall": x, "<category>": y, ...}; raw: one JSON-serialisable record per video with at least
        "index", "prompt" and "score" (that video's own overall score).
        """

    def evaluate(self, videos: torch.Tensor, prompts: list[str], checks: list[tuple[str, ...]]) -> dict[str, float]:
        return self.evaluate_detailed(videos, prompts, checks)[0]

    def evaluate_batches(
        self, batches: Iterable[tuple[torch.Tensor, list[str], list[tuple[str, ...]]]]
    ) -> tuple[dict[str, float], list[dict[str, Any]]]:
        """Evaluate videos that arrive batch by batch (videos[b, F, 3, H, W], prompts, checks) as they are generated.

        This default gathers them in memory; an evaluator of large videos (VBench-2.0) writes each batch to disk.
        """
        videos, prompts, checks = [], [], []
        for batch_videos, batch_prompts, batch_checks in batches:
            videos.append(batch_videos.cpu())
            prompts += list(batch_prompts)
            checks += list(batch_checks)
        return self.evaluate_detailed(torch.cat(videos), prompts, checks)
