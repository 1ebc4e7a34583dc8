"""`datasets.videogen_eval`: VideoGen-Eval prompts in VideoAlign's `videogen_eval.csv` format.

KwaiVGI/VideoAlign, `datasets/video_eval_prompts/videogen_eval.csv`: a CSV with header `prompt,prompt_shorter,prompt_zh`
and 400 rows: `prompt` is VideoAlign's rewrite of a VideoGen-Eval prompt (a long, detailed description, what
VideoAlign generated from), `prompt_shorter` the short original, `prompt_zh` a Chinese translation. The same
folder's `vbench.csv` shares the layout and `TA_hard.csv` has `prompt,prompt_zh`, so they load too. The files
carry no checks: give a checks JSONL made by `tvrl-bench decompose` (keyed by the chosen column's text).
"""

from __future__ import annotations

from pathlib import Path

from tvrl_bench.datasets.rows import PromptFileError
from tvrl_bench.datasets.splits import build_prompt_set, load_rows
from tvrl_bench.prompts import PromptSet
from tvrl_bench.registry import register

COLUMNS = ("prompt", "prompt_shorter", "prompt_zh")


@register("datasets", "videogen_eval")
def videogen_eval_prompt_set(
    path: str,
    column: str = "prompt",
    checks_path: str | None = None,
    eval_path: str | None = None,
    eval_fraction: float = 0.0,
    seed: int = 0,
    name: str = "videogen_eval",
) -> PromptSet:
    """VideoGen-Eval prompts from VideoAlign's videogen_eval.csv (by path), checks from a decompose cache.

    path: the CSV; column: which text is the prompt ("prompt": VideoAlign's detailed rewrite, "prompt_shorter":
    the short original, "prompt_zh": Chinese); checks_path: a checks JSONL from `tvrl-bench decompose`;
    eval_path / eval_fraction / seed: the eval split (default: every prompt trains; see datasets.file).
    """
    if Path(path).suffix.lower() != ".csv":
        raise PromptFileError(f"{path}: VideoAlign's videogen_eval prompts are a .csv file (header {','.join(COLUMNS)})")
    rows = load_rows(path, column, checks_path)
    eval_rows = load_rows(eval_path, column, checks_path) if eval_path else None
    return build_prompt_set(name, rows, eval_rows, eval_fraction, seed)
