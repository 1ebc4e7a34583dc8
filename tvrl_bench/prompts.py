"""Prompts with their yes/no checks: the unit every dataset, reward and evaluator shares."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PromptItem:
    """A prompt and the yes/no checks it decomposes into ("Is there a red circle?")."""

    prompt: str
    checks: tuple[str, ...]


@dataclass(frozen=True)
class PromptSet:
    """Disjoint train and eval prompts; a dataset component returns one."""

    name: str
    train: tuple[PromptItem, ...]
    eval: tuple[PromptItem, ...]
