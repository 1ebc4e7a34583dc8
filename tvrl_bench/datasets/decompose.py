"""Prompt decomposition: a text LLM (a Qwen3.5 checkpoint) writes yes/no checks for each prompt, cached to JSONL.

The cache is a JSONL file, one `{"prompt", "checks", "raw", "model"}` object per prompt (`raw`: the model's
answer), appended batch by batch, so an interrupted run resumes where it stopped: prompts already in the cache
are skipped (those cached with no checks are redone with `retry_empty`). The cache is itself a prompt file with
checks: `datasets.file.path` or any loader's `checks_path` can point at it.

The model is asked in its chat template with thinking off (Qwen3.5's `enable_thinking=False`), decoded greedily;
`parse_checks` keeps the numbered or bulleted lines of its answer that end with '?'.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from tvrl_bench.datasets.splits import read_checks_cache

INSTRUCTION = """\
Turn the text-to-video prompt below into yes/no questions that check whether a generated video follows it.
Rules:
- Write at most {max_checks} questions, one per line, numbered 1., 2., 3., ...
- Each question checks one thing the prompt states: an object or person, an attribute (colour, material, \
number, size), an action or motion, a spatial relation, the order of events, the camera, or the setting.
- A video that follows the prompt must get the answer "yes" to every question.
- Ask only about what the prompt states and what can be seen in the video.
- Write only the numbered questions, nothing else.

Prompt: {prompt}"""

# A leading list marker: "1.", "2)", "(3)", "-", "*", "•", "a)", "Q1:", "Question 2 -".
_MARKER = re.compile(r"^(?:[-*•·]+|\(?\d{1,3}[.):]|\(?[a-zA-Z][.)]|(?:Q|Question)\s*\d{0,3}\s*[:.)-])\s*")


def instruction(prompt: str, max_checks: int) -> str:
    """The user message asking for at most `max_checks` checks of `prompt`."""
    return INSTRUCTION.format(prompt=prompt.strip(), max_checks=max_checks)


def parse_checks(text: str, max_checks: int | None = None) -> tuple[str, ...]:
    """The questions of a model's answer: list lines ending in '?', markers and emphasis removed, deduplicated.

    A thinking block (`<think>...</think>`) is dropped first. At most `max_checks` are kept.
    """
    if "</think>" in text:
        text = text.split("</think>")[-1]
    found: dict[str, str] = {}
    for line in text.splitlines():
        item = line.strip()
        while True:
            stripped = _MARKER.sub("", item, count=1).strip().strip("*_`\"' ").strip()
            if stripped == item:
                break
            item = stripped
        if len(item) > 1 and item.endswith("?") and any(ch.isalpha() for ch in item):
            found.setdefault(item.lower(), item)
    checks = tuple(found.values())
    return checks[:max_checks] if max_checks is not None else checks


def read_cache(path: str | Path) -> dict[str, tuple[str, ...]]:
    """prompt -> checks of a cache file (empty when the file does not exist yet); the last entry of a prompt wins."""
    return read_checks_cache(path) if Path(path).exists() else {}


def append_cache(path: str | Path, records: Iterable[dict]) -> None:
    """Append records (one JSON object per line) and flush, so a crash loses at most the current batch."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
        f.flush()


class CheckWriter:
    """A causal LM with its tokenizer, loaded from a local path, that answers the decomposition instruction."""

    def __init__(self, model_path: str, device: str = "auto", dtype: str = "auto", max_new_tokens: int = 256) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(model_path).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"--model {model_path}: no such folder; give a local Qwen3.5 checkpoint folder")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if dtype == "auto":
            dtype = "bfloat16" if device.startswith("cuda") else "float32"
        self.device = device
        self.max_new_tokens = max_new_tokens
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        # A Qwen3.5 checkpoint holds the vision-language model; AutoModelForCausalLM loads its text model.
        self.model = AutoModelForCausalLM.from_pretrained(str(path), dtype=getattr(torch, dtype)).to(device).eval()
        # Stop at the end of the assistant turn (<|im_end|> in Qwen's chat format) or at the tokenizer's eos.
        vocab = self.tokenizer.get_vocab()
        stops = {self.tokenizer.eos_token_id, vocab.get("<|im_end|>")}
        self.stop_ids = sorted(i for i in stops if isinstance(i, int))

    def chat_text(self, prompt: str, max_checks: int) -> str:
        """The chat-formatted request for one prompt: the user instruction, then the assistant turn, thinking off."""
        messages = [{"role": "user", "content": instruction(prompt, max_checks)}]
        return self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, enable_thinking=False
        )

    def generate(self, prompts: Sequence[str], max_checks: int) -> list[str]:
        """The model's answer to each prompt's instruction (greedy decoding, batched with left padding)."""
        return self.generate_chat([[{"role": "user", "content": instruction(p, max_checks)}] for p in prompts])

    def generate_chat(self, conversations: Sequence[list[dict]]) -> list[str]:
        """The model's next assistant turn for each conversation (chat messages; thinking off, greedy, batched)."""
        import torch

        texts = [
            self.tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True, enable_thinking=False)
            for m in conversations
        ]
        batch = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        with torch.no_grad():
            out = self.model.generate(
                **batch,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.stop_ids or None,
            )
        new_tokens = out[:, batch["input_ids"].shape[1]:]
        return self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)


@dataclass(frozen=True)
class DecomposeStats:
    """What a decomposition run did: prompts generated now, found in the cache, and generated without a check."""

    generated: int
    cached: int
    empty: int


def decompose(
    prompts: Sequence[str],
    out: str | Path,
    writer: Callable[[], CheckWriter],
    max_checks: int = 8,
    batch_size: int = 8,
    retry_empty: bool = False,
    progress: bool = True,
    model_name: str = "",
) -> DecomposeStats:
    """Write checks for every prompt not yet in the cache `out`; `writer` builds the model only when one is needed."""
    from tqdm import tqdm

    if max_checks < 1 or batch_size < 1:
        raise ValueError(f"max_checks and batch_size must be at least 1, got {max_checks} and {batch_size}")
    cache = read_cache(out)
    unique = list(dict.fromkeys(p.strip() for p in prompts if p.strip()))
    todo = [p for p in unique if p not in cache or (retry_empty and not cache[p])]
    empty = 0
    if todo:
        model = writer()
        with tqdm(total=len(todo), desc="decompose", unit="prompt", disable=not progress) as bar:
            for start in range(0, len(todo), batch_size):
                chunk = todo[start:start + batch_size]
                answers = model.generate(chunk, max_checks)
                records = []
                for prompt, answer in zip(chunk, answers):
                    checks = parse_checks(answer, max_checks)
                    empty += not checks
                    records.append({"prompt": prompt, "checks": list(checks), "raw": answer, "model": model_name})
                append_cache(out, records)
                bar.update(len(chunk))
    return DecomposeStats(generated=len(todo), cached=len(unique) - len(todo), empty=empty)
