"""Prompts with their yes/no checks: the unit every dataset, reward and evaluator shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class PromptItem:
    """A prompt and the yes/no checks it decomposes into ("Is there a red circle?")."""

    prompt: str
    checks: tuple[str, ...]


@dataclass(frozen=True)
class PromptSet:
    """Disjoint train and eval prompts; a dataset component returns one.

    `held_out(n)`, where the dataset can draw more, returns its first n eval prompts drawn as if n_eval were n
    (so they start with `eval`, in order), less those whose scene is in `train`, and how many were dropped: the
    wide evaluation's prompts. None for a dataset with a fixed eval split.
    """

    name: str
    train: tuple[PromptItem, ...]
    eval: tuple[PromptItem, ...]
    held_out: Callable[[int], tuple[tuple[PromptItem, ...], int]] | None = field(default=None, compare=False)
