"""Reading prompts (with optional checks and split) from CSV, JSONL and plain-text files.

Formats (the file's suffix decides):
- CSV (`.csv`): a header row; column `prompt` (required; another column can be named), `checks` (optional),
  `split` (optional); other columns are ignored.
- JSONL (`.jsonl`): one JSON object per line with key `prompt` (required), `checks`, `split` (optional); blank
  lines are skipped.
- text (`.txt`): one prompt per line, no checks; blank lines are skipped.
`checks` is a JSON list of strings (`["Is there a dog?", "Is the dog running?"]`) or `|`-separated text
(`Is there a dog? | Is the dog running?`); in JSONL it may also be a JSON list directly. `split` is `train` or
`eval` (any case); empty means "not given".
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SPLITS = ("train", "eval")
SUFFIXES = (".csv", ".jsonl", ".txt")


class PromptFileError(ValueError):
    """A prompt file is missing or malformed; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class PromptRow:
    """One prompt read from a file, with its checks, its split (None when not given) and where it was read."""

    prompt: str
    checks: tuple[str, ...]
    split: str | None
    where: str


def parse_checks(value: Any, where: str) -> tuple[str, ...]:
    """Checks from a JSON list (or its text) or from `|`-separated text; () for an empty value."""
    if value is None:
        return ()
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return ()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise PromptFileError(
                    f"{where}: checks start with '[' but are not a valid JSON list ({exc.msg}); write them as "
                    '["Is there a dog?", "Is it running?"] or as "Is there a dog? | Is it running?"'
                ) from None
        else:
            return tuple(part.strip() for part in text.split("|") if part.strip())
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise PromptFileError(f"{where}: checks must be a list of strings, got {json.dumps(value)[:100]}")
    return tuple(c.strip() for c in value if c.strip())


def parse_split(value: Any, where: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    split = str(value).strip().lower()
    if split not in SPLITS:
        raise PromptFileError(f"{where}: split must be 'train' or 'eval' (or empty), got {value!r}")
    return split


def _row(prompt: Any, checks: Any, split: Any, where: str, prompt_key: str) -> PromptRow:
    if not isinstance(prompt, str) or not prompt.strip():
        raise PromptFileError(f"{where}: '{prompt_key}' is missing or empty; every row needs a prompt text")
    return PromptRow(prompt.strip(), parse_checks(checks, where), parse_split(split, where), where)


def read_rows(path: str | Path, prompt_key: str = "prompt") -> list[PromptRow]:
    """Every prompt of a CSV, JSONL or text file (see the module docstring), in file order."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise PromptFileError(f"prompt file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _read_csv(path, prompt_key)
    if suffix == ".jsonl":
        return _read_jsonl(path, prompt_key)
    if suffix == ".txt":
        lines = path.read_text(encoding="utf-8").splitlines()
        return [PromptRow(t.strip(), (), None, f"{path}, line {i}") for i, t in enumerate(lines, 1) if t.strip()]
    raise PromptFileError(f"{path}: unsupported prompt file type '{suffix}'; use one of {', '.join(SUFFIXES)}")


def _read_csv(path: Path, prompt_key: str) -> list[PromptRow]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        columns = reader.fieldnames or []
        if prompt_key not in columns:
            raise PromptFileError(
                f"{path}, line 1: no '{prompt_key}' column in the header (columns: {', '.join(columns) or 'none'}); "
                f"add a header row naming the prompt column '{prompt_key}'"
            )
        rows = []
        for record in reader:
            where = f"{path}, line {reader.line_num}"
            if None in record:
                raise PromptFileError(
                    f"{where}: more fields than the header has columns; quote fields that contain commas"
                )
            rows.append(_row(record.get(prompt_key), record.get("checks"), record.get("split"), where, prompt_key))
    return rows


def _read_jsonl(path: Path, prompt_key: str) -> list[PromptRow]:
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}, line {i}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PromptFileError(f"{where}: not a JSON object ({exc.msg}); write one JSON object per line") from None
        if not isinstance(record, dict):
            raise PromptFileError(f"{where}: expected a JSON object with a '{prompt_key}' key")
        rows.append(_row(record.get(prompt_key), record.get("checks"), record.get("split"), where, prompt_key))
    return rows
