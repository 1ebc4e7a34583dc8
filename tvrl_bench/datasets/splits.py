"""From rows read off prompt files to a PromptSet: checks from a cache, and the train / eval split.

The split, in order of precedence:
1. `eval_rows` given (a separate eval file): the file's rows train, the eval file's rows evaluate;
2. the rows carry a `split` (every row must then carry one);
3. `eval_fraction` of the distinct prompts, drawn with `seed`, evaluate; the rest train (file order is kept
   within each split, and copies of one prompt always land in the same split).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Mapping, Sequence

from tvrl_bench.datasets.rows import PromptFileError, PromptRow, read_rows
from tvrl_bench.prompts import PromptItem, PromptSet


def read_checks_cache(path: str | Path) -> dict[str, tuple[str, ...]]:
    """prompt -> checks from a JSONL file of {"prompt", "checks"} objects (`tvrl-bench decompose`'s cache).

    A prompt listed twice takes its last checks (the cache is append-only).
    """
    path = Path(path).expanduser()
    if path.suffix.lower() != ".jsonl":
        raise PromptFileError(f"{path}: a checks file is JSONL ({{'prompt': ..., 'checks': [...]}} per line)")
    return {row.prompt: row.checks for row in read_rows(path)}


def with_checks(rows: Sequence[PromptRow], checks: Mapping[str, tuple[str, ...]] | None) -> list[PromptRow]:
    """Rows whose checks are replaced by `checks[prompt]` where the mapping has the prompt."""
    if not checks:
        return list(rows)
    return [PromptRow(r.prompt, checks[r.prompt], r.split, r.where) if r.prompt in checks else r for r in rows]


def _items(rows: Sequence[PromptRow]) -> tuple[PromptItem, ...]:
    return tuple(PromptItem(r.prompt, r.checks) for r in rows)


def build_prompt_set(
    name: str,
    rows: Sequence[PromptRow],
    eval_rows: Sequence[PromptRow] | None = None,
    eval_fraction: float = 0.0,
    seed: int = 0,
) -> PromptSet:
    """The PromptSet of `rows` split as the module docstring says."""
    if not rows and not eval_rows:
        raise PromptFileError(f"prompt set '{name}' is empty: its file(s) hold no prompts")
    if eval_rows is not None:
        return PromptSet(name, _items(rows), _items(eval_rows))
    given = [r for r in rows if r.split is not None]
    if given:
        lacking = next((r for r in rows if r.split is None), None)
        if lacking is not None:
            raise PromptFileError(
                f"{lacking.where}: this row has no split while others do; give every row a split "
                "('train' or 'eval') or none (then eval_fraction and seed split the prompts)"
            )
        return PromptSet(
            name, _items([r for r in rows if r.split == "train"]), _items([r for r in rows if r.split == "eval"])
        )
    if not 0.0 <= eval_fraction < 1.0:
        raise PromptFileError(f"prompt set '{name}': eval_fraction must be in [0, 1), got {eval_fraction}")
    distinct = list(dict.fromkeys(r.prompt for r in rows))
    n_eval = round(eval_fraction * len(distinct))
    held_out = set(random.Random(seed).sample(distinct, n_eval))
    return PromptSet(
        name, _items([r for r in rows if r.prompt not in held_out]), _items([r for r in rows if r.prompt in held_out])
    )


def load_rows(path: str | Path, prompt_key: str = "prompt", checks_path: str | Path | None = None) -> list[PromptRow]:
    """The rows of a prompt file, their checks replaced from `checks_path` (a checks JSONL) where it has them."""
    cache = read_checks_cache(checks_path) if checks_path else None
    return with_checks(read_rows(path, prompt_key), cache)
