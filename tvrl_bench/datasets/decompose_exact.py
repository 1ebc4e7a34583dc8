"""The official decomposition format: exactly N (5) checks per prompt as JSON, checked, repaired by asking again.

The model answers a JSON array [{"id": "q1", "question": "...?", "answer_type": "yes_no", "target": "Yes"}, ...];
`problems` lists every way an answer breaks the format (not JSON, not exactly q1..qN in order, a question that is
not a question, an answer type other than yes_no, a target other than "Yes"). An answer with problems is sent back
with the list of problems for a repair, up to `repairs` times. Records in the cache carry "format": "json5".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from tvrl_bench.datasets.decompose import DecomposeStats, append_cache, read_cache

FORMAT = "json5"

EXACT_INSTRUCTION = """\
Turn the text-to-video prompt below into exactly {n} yes/no questions that check whether a generated video \
follows it.
Rules:
- Each question checks one thing the prompt states: an object or person, an attribute (colour, material, \
number, size), an action or motion, a spatial relation, the order of events, the camera, or the setting.
- A video that follows the prompt must get the answer "Yes" to every question.
- Ask only about what the prompt states and what can be seen in the video.
- Answer with a JSON array only, with exactly {n} objects, in this form:
[{example}]

Prompt: {prompt}"""

REPAIR_INSTRUCTION = """\
Your answer does not follow the format:
{problems}
Answer again with the JSON array only: exactly {n} objects with ids {ids}, each with a question ending in '?', \
"answer_type": "yes_no" and "target": "Yes"."""


def check_ids(n: int) -> list[str]:
    return [f"q{k + 1}" for k in range(n)]


def exact_instruction(prompt: str, n: int = 5) -> str:
    example = ", ".join(
        json.dumps({"id": i, "question": "...?", "answer_type": "yes_no", "target": "Yes"}) for i in check_ids(n)
    )
    return EXACT_INSTRUCTION.format(n=n, example=example, prompt=prompt.strip())


def parse_answer(text: str) -> Any:
    """The JSON value of a model's answer (thinking block and code fences dropped), or None if it is not JSON."""
    if "</think>" in text:
        text = text.split("</think>")[-1]
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        return None
    try:
        return json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None


def problems(value: Any, n: int = 5) -> list[str]:
    """Every way `value` (a parsed answer) breaks the exact-n format; empty when it is valid."""
    if not isinstance(value, list):
        return ["the answer is not a JSON array"]
    found = []
    if len(value) != n:
        found.append(f"it has {len(value)} items instead of exactly {n}")
    for k, item in enumerate(value):
        where = f"item {k + 1}"
        if not isinstance(item, dict):
            found.append(f"{where} is not an object")
            continue
        if item.get("id") != f"q{k + 1}":
            found.append(f"{where} has id {item.get('id')!r} instead of 'q{k + 1}'")
        question = item.get("question")
        if not isinstance(question, str) or not question.strip().endswith("?") or len(question.strip()) < 3:
            found.append(f"{where} has no question ending in '?'")
        if item.get("answer_type") != "yes_no":
            found.append(f"{where} has answer_type {item.get('answer_type')!r} instead of 'yes_no'")
        if item.get("target") != "Yes":
            found.append(f"{where} has target {item.get('target')!r} instead of 'Yes'")
    return found


def record_problems(record: dict, n: int = 5) -> list[str]:
    """Problems of one cache record: its raw answer must pass `problems` and its checks be the n questions."""
    value = parse_answer(str(record.get("raw", "")))
    found = problems(value, n)
    if not found and [q["question"].strip() for q in value] != list(record.get("checks", [])):
        found.append("its checks differ from the questions of its raw answer")
    return found


def check_cache(path: str | Path, n: int = 5) -> dict[str, list[str]]:
    """prompt -> problems for every record of a cache that breaks the exact-n format (the last record counts)."""
    latest: dict[str, dict] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            latest[str(record.get("prompt", ""))] = record
    return {p: found for p, r in latest.items() if (found := record_problems(r, n))}


@dataclass
class Conversation:
    """One prompt's exchange with the model: the chat messages so far and the last parsed answer."""

    prompt: str
    messages: list[dict]
    raw: str = ""


def decompose_exact(
    prompts: Sequence[str],
    out: str | Path,
    writer: Callable[[], Any],
    n: int = 5,
    repairs: int = 2,
    batch_size: int = 8,
    model_name: str = "",
) -> DecomposeStats:
    """Exactly n checks per prompt not yet validly cached; `writer()` must offer generate_chat(list of messages).

    Each prompt is asked once, then up to `repairs` times more with the problems of its last answer. A prompt still
    invalid after the repairs is cached with no checks (and counted in `empty`).
    """
    if n < 1 or repairs < 0 or batch_size < 1:
        raise ValueError(f"need n >= 1, repairs >= 0, batch_size >= 1; got {n}, {repairs}, {batch_size}")
    cache = read_cache(out)
    unique = list(dict.fromkeys(p.strip() for p in prompts if p.strip()))
    todo = [p for p in unique if len(cache.get(p, ())) != n]
    empty = 0
    model = writer() if todo else None
    for start in range(0, len(todo), batch_size):
        talks = [Conversation(p, [{"role": "user", "content": exact_instruction(p, n)}]) for p in todo[start : start + batch_size]]
        done: dict[str, list[str]] = {}
        for attempt in range(repairs + 1):
            pending = [t for t in talks if t.prompt not in done]
            if not pending:
                break
            for talk, answer in zip(pending, model.generate_chat([t.messages for t in pending])):
                talk.raw = answer
                value = parse_answer(answer)
                found = problems(value, n)
                if not found:
                    done[talk.prompt] = [q["question"].strip() for q in value]
                else:
                    talk.messages = talk.messages + [
                        {"role": "assistant", "content": answer},
                        {"role": "user", "content": REPAIR_INSTRUCTION.format(
                            problems="\n".join(f"- {f}" for f in found), n=n, ids=", ".join(check_ids(n)))},
                    ]
        records = []
        for talk in talks:
            checks = done.get(talk.prompt, [])
            empty += not checks
            records.append({"prompt": talk.prompt, "checks": checks, "raw": talk.raw, "model": model_name,
                            "format": FORMAT})
        append_cache(out, records)
    return DecomposeStats(generated=len(todo), cached=len(unique) - len(todo), empty=empty)
