"""Teacher-forced digit answers: the answer template's score slots, the digit tokens, and the plan that builds
the token sequence read for each score (rewards/qwen/digit_scores.py).

For score slot k the sequence is the answer's first segment, then for each earlier slot its digits and the next
segment, then the read of slot k's leading digit and, with decimals, the greedy leading digit, the point and one
read per decimal place. Earlier slots hold the model's greedy digits (`context = "greedy"`, resolved by forward
passes the caller runs) or a fixed digit (`context = c`).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any, Callable

# A plan step: ("append", ids), ("greedy", kind) or ("read", kind, weight); kind is "int" (the leading digit, in
# the critic's digit range) or "dec" (a decimal digit 0-9).
Step = tuple


@dataclass(frozen=True)
class AnswerTemplate:
    """An answer format split at its score slots: segments[0] slot[0] segments[1] ... slot[K-1] segments[K]."""

    segments: tuple[str, ...]
    slots: tuple[str, ...]

    @classmethod
    def parse(cls, template: str, score_names: tuple[str, ...], param: str) -> "AnswerTemplate":
        """Split `template` at its `{name}` fields; each score name must appear exactly once."""
        segments, slots, text = [], [], ""
        for literal, field, spec, conversion in string.Formatter().parse(template):
            text += literal
            if field is None:
                continue
            if spec or conversion:
                raise ValueError(f"{param}: slot '{{{field}}}' must be a plain field (no format spec)")
            segments.append(text)
            slots.append(field)
            text = ""
        segments.append(text)
        if sorted(slots) != sorted(score_names) or len(set(slots)) != len(slots):
            raise ValueError(
                f"{param}={template!r} must hold each score name exactly once as a field "
                f"({', '.join('{' + n + '}' for n in score_names)}); found {slots}"
            )
        return cls(tuple(segments), tuple(slots))


def _single_token(tokenizer: Any, text: str, name: str) -> int:
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        raise ValueError(f"{name}: the tokenizer splits '{text}' into {len(ids)} tokens; score digits must be "
                         "single tokens")
    return int(ids[0])


@dataclass(frozen=True)
class DigitTokens:
    """Token ids of the leading digits (values `int_values`), the decimal digits 0-9, the point and the answer
    template's segments."""

    int_values: tuple[int, ...]
    int_ids: tuple[int, ...]
    dec_ids: tuple[int, ...]
    dot_ids: tuple[int, ...]
    segment_ids: tuple[tuple[int, ...], ...]

    @classmethod
    def from_tokenizer(
        cls, tokenizer: Any, digits: tuple[int, int], template: AnswerTemplate, name: str
    ) -> "DigitTokens":
        """Tokenize the digits low..high, 0-9, '.' and the template's segments; every digit must be one token."""
        int_values = tuple(range(digits[0], digits[1] + 1))
        return cls(
            int_values=int_values,
            int_ids=tuple(_single_token(tokenizer, str(d), name) for d in int_values),
            dec_ids=tuple(_single_token(tokenizer, str(d), name) for d in range(10)),
            dot_ids=tuple(tokenizer(".", add_special_tokens=False)["input_ids"]),
            segment_ids=tuple(tuple(tokenizer(s, add_special_tokens=False)["input_ids"]) for s in template.segments),
        )

    def ids(self, kind: str) -> list[int]:
        """The candidate token ids of a read or greedy step of `kind` ("int" or "dec")."""
        return list(self.int_ids if kind == "int" else self.dec_ids)

    def values(self, kind: str) -> list[int]:
        """The digit values of `ids(kind)`, in the same order."""
        return list(self.int_values if kind == "int" else range(10))


def plan(tokens: DigitTokens, slot: int, context: str | int, decimal_places: int) -> list[Step]:
    """The steps that build the sequence for reading slot `slot` (after the answer's first segment)."""
    steps: list[Step] = []
    for j in range(slot):
        if context == "greedy":
            steps.append(("greedy", "int"))
            if decimal_places:
                steps.append(("append", tokens.dot_ids))
                steps.extend([("greedy", "dec")] * decimal_places)
        else:
            ids = [tokens.int_ids[tokens.int_values.index(int(context))]]
            if decimal_places:
                ids += list(tokens.dot_ids) + [tokens.dec_ids[0]] * decimal_places
            steps.append(("append", ids))
        steps.append(("append", tokens.segment_ids[j + 1]))
    steps.append(("read", "int", 1.0))
    for place in range(1, decimal_places + 1):
        steps.append(("greedy", "int" if place == 1 else "dec"))
        if place == 1:
            steps.append(("append", tokens.dot_ids))
        steps.append(("read", "dec", 10.0 ** -place))
    return steps


@dataclass
class PairSequence:
    """One pair's teacher-forced sequence being built: token ids, plan steps left, and read positions."""

    ids: list[int]
    steps: list[Step]
    reads: list[tuple[int, str, float]]  # (position, "int" | "dec", weight)


def run_plans(
    pairs: list[PairSequence], greedy: Callable[[list[int], list[str]], list[int]]
) -> list[PairSequence]:
    """Carry out every pair's plan: appends and reads at once, greedy steps in rounds.

    Each round calls `greedy(waiting, kinds)` with the indices of the pairs waiting at a greedy step and its kind
    per pair; it returns the token id to write for each (the argmax digit after the pair's current ids).
    """
    while True:
        waiting = []
        for index, pair in enumerate(pairs):
            while pair.steps and pair.steps[0][0] != "greedy":
                step = pair.steps.pop(0)
                if step[0] == "append":
                    pair.ids = pair.ids + list(step[1])
                else:
                    pair.reads.append((len(pair.ids) - 1, step[1], step[2]))
            if pair.steps:
                waiting.append(index)
        if not waiting:
            return pairs
        chosen = greedy(waiting, [pairs[i].steps[0][1] for i in waiting])
        for i, token in zip(waiting, chosen):
            pairs[i].steps.pop(0)
            pairs[i].ids = pairs[i].ids + [token]
