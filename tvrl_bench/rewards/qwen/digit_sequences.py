"""The teacher-forced token sequence of each (video, score name) pair of a digit-score critic, greedy digits
resolved (rewards/qwen/digit_scores.py).

A pair's sequence starts with its chat text and the answer's first segment (`DigitPrompts.prefix_ids`) and follows
the plan of its score slot (rewards/qwen/teacher_forcing.py). Greedy steps are resolved in rounds, each one forward
without gradients over the pairs still waiting (the argmax over the allowed digit tokens after the pair's ids).
"""

from __future__ import annotations

from typing import Protocol

import torch

from tvrl_bench.rewards.qwen.digit_prompts import DigitPrompts
from tvrl_bench.rewards.qwen.digit_reader import DigitReader
from tvrl_bench.rewards.qwen.teacher_forcing import AnswerTemplate, DigitTokens, PairSequence, plan, run_plans


class VisionInput(Protocol):
    """What a digit critic's vision input offers (`digit_vision.VideoVision`, `digit_vision.ImageVision`)."""

    def encode(self, videos: torch.Tensor, device: torch.device) -> tuple[dict, list[list[str]]]: ...

    def select(self, vision: dict, rows: list[int]) -> dict: ...


class DigitSequenceBuilder:
    """Token ids and read positions of pairs, with the digits of earlier slots filled (greedy or fixed)."""

    def __init__(
        self,
        vision: VisionInput,
        prompts: DigitPrompts,
        reader: DigitReader,
        template: AnswerTemplate,
        digits: DigitTokens,
        context: str | int,
        decimal_places: int,
    ) -> None:
        """
        Args:
            vision: the vision input (model keyword arguments and placeholder texts of a batch of videos).
            prompts: the chat texts and answer prefix ids.
            reader: the forward that gives digit logits (greedy steps).
            template: the answer template (which slot each score name fills).
            digits: the digit token ids.
            context: "greedy" or a fixed digit for the earlier slots.
            decimal_places: decimal digits read per score.
        """
        self.vision = vision
        self.prompts = prompts
        self.reader = reader
        self.template = template
        self.digits = digits
        self.context = context
        self.decimal_places = decimal_places

    def build(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> list[PairSequence]:
        """Teacher-forced token ids and read positions for videos[b, F, 3, H, W] and their prompts and score
        names (no gradients; greedy digits resolved by forward passes over the pairs still waiting)."""
        with torch.no_grad():
            vision, placeholders = self.vision.encode(videos.detach(), self.reader.device)
            prefix = self.prompts.prefix_ids([self.prompts.text(p) for p in prompts], placeholders)
            slots = [self.template.slots.index(q) for q in questions]
            pairs = [PairSequence(ids, plan(self.digits, slot, self.context, self.decimal_places), [])
                     for ids, slot in zip(prefix, slots)]

            def greedy(waiting: list[int], kinds: list[str]) -> list[int]:
                logits = self.reader.logits(
                    self.vision.select(vision, waiting), [pairs[i].ids for i in waiting],
                    [[len(pairs[i].ids) - 1] for i in waiting], kinds,
                )
                return [self.digits.ids(kind)[int(row[0].argmax())] for kind, row in zip(kinds, logits)]

            return run_plans(pairs, greedy)
