"""`datasets.file`: prompts with their checks from a CSV, JSONL or text file (formats: tvrl_bench.datasets.rows)."""

from __future__ import annotations

from pathlib import Path

from tvrl_bench.datasets.splits import build_prompt_set, load_rows
from tvrl_bench.prompts import PromptSet
from tvrl_bench.registry import register


@register("datasets", "file")
def file_prompt_set(
    path: str,
    eval_path: str | None = None,
    eval_fraction: float = 0.1,
    seed: int = 0,
    checks_path: str | None = None,
    prompt_column: str = "prompt",
    name: str | None = None,
) -> PromptSet:
    """Prompts and checks from a CSV / JSONL / text file; train / eval by a split column, an eval file or a fraction.

    path: the prompts (CSV with a header, JSONL objects, or one prompt per line); columns / keys `prompt`,
    `checks` (JSON list or `|`-separated), `split` (train / eval, optional). eval_path: a second file holding the
    eval prompts (then every prompt of `path` trains). Otherwise a `split` column decides, or else `eval_fraction`
    of the distinct prompts drawn with `seed` evaluate. checks_path: a checks JSONL (`tvrl-bench decompose`)
    whose checks replace those of the prompts it lists. prompt_column: the prompt column / key.
    """
    rows = load_rows(path, prompt_column, checks_path)
    eval_rows = load_rows(eval_path, prompt_column, checks_path) if eval_path else None
    return build_prompt_set(name or Path(path).stem, rows, eval_rows, eval_fraction, seed)
