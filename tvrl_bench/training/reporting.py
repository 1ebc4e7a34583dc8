"""What the trial loop reports: each step's output, and the hooks the main process's tracker gives the loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from tvrl_bench.prompts import PromptItem


@dataclass
class StepOutput:
    metrics: dict[str, float]
    video: torch.Tensor  # first rollout's video [F, 3, H, W]
    weights: torch.Tensor  # its merged credit map [T', H', W']
    prompt: str


@dataclass
class Hooks:
    """What the loop reports to (the main process's tracker): step metrics and media, samples, evaluations."""

    on_step: Callable[[int, StepOutput], None] = lambda step, out: None
    on_samples: Callable[[str, torch.Tensor, list[PromptItem]], None] = lambda tag, videos, items: None
    on_eval: Callable[[int, dict[str, float]], None] = lambda step, metrics: None
