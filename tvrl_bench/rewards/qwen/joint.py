"""The joint prompt of the official TVRL critic: all of a video's checks in one question, all answered "Yes".

The user turn lists the checks as a JSON array of {"id": "q1", "question": ..., "answer_type": "yes_no"}; the
teacher-forced reference answer is the JSON array [{"id": "q1", "answer": "Yes"}, ...]. Check k's score is the
log-probability of the answer token that starts check k's value, so check k is conditioned on the earlier checks
having been answered "Yes" (one forward per video gives all K scores).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

DEFAULT_JOINT_TEMPLATE = (
    "Answer each question about the video.\n"
    "Questions (JSON):\n{questions}\n"
    '- For "yes_no" questions, answer with "Yes" or "No" only.\n'
    'Reply with a JSON array of objects with the keys "id" and "answer", in the order of the questions.'
)


def check_id(k: int) -> str:
    """The id of the k-th check (0-based): q1, q2, ..."""
    return f"q{k + 1}"


def joint_question(checks: Sequence[str], prompt: str = "", template: str = DEFAULT_JOINT_TEMPLATE) -> str:
    """The user text that asks all `checks` at once."""
    items = [{"id": check_id(k), "question": q, "answer_type": "yes_no"} for k, q in enumerate(checks)]
    return template.format(questions=json.dumps(items, ensure_ascii=False), prompt=prompt)


def joint_answer(n_checks: int, answer: str = "Yes") -> tuple[str, list[int]]:
    """(reference answer text, character offset of each check's answer value in it)."""
    starts, text = [], "["
    for k in range(n_checks):
        text += ("" if k == 0 else ", ") + json.dumps({"id": check_id(k), "answer": ""})[:-2]  # ends with the opening quote
        starts.append(len(text))
        text += answer + '"}'
    text += "]"
    return text, starts


def answer_token_positions(tokenizer: Any, text: str, char_starts: Sequence[int]) -> tuple[list[int], list[int]]:
    """(token ids of `text`, for each character offset the index of the token that covers it).

    Token spans come from decoding growing prefixes of the ids (the reference answer is ASCII, so every token
    decodes to whole characters). Raises ValueError if the decoded text differs from `text`.
    """
    ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    ends, decoded = [], ""
    for j in range(len(ids)):
        decoded = tokenizer.decode(ids[: j + 1])
        ends.append(len(decoded))
    if decoded != text:
        raise ValueError(f"the tokenizer does not round-trip the reference answer {text!r} (got {decoded!r})")
    positions = []
    for start in char_starts:
        positions.append(next(j for j, end in enumerate(ends) if end > start))
    return ids, positions
