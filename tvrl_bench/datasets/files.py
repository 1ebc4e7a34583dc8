"""`datasets.file`: prompts with their checks from a CSV, JSONL or text file (formats: tvrl_bench.datasets.rows).

Every problem with a file is a PromptFileError naming the file, the line and the fix: a missing file, bytes that
are not UTF-8, a malformed row. The prompt set remembers where each prompt was read (`locations`), so a trial
can name the line of a prompt that has no checks. `check_bound_prompt_files()` reads the files a parsed config
binds without building anything (a registry config check: a trial, and a sweep for every trial, runs it before
anything starts), and, when the trial has a toy component that reads the checks (one that declares its worlds:
the toy critics, evaluator and located credit), parses every check as the toy world's, so a check they cannot read
is named by file and line before the first step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tvrl_bench.config.trial_components import trial_components
from tvrl_bench.datasets.rows import PromptFileError, PromptRow
from tvrl_bench.datasets.splits import build_prompt_set, load_rows
from tvrl_bench.prompts import PromptSet
from tvrl_bench.registry import config_check, register

PATH_PARAMS = ("path", "eval_path", "checks_path")


@dataclass(frozen=True)
class LocatedPromptSet(PromptSet):
    """A PromptSet that also knows where each prompt was read: prompt -> "file, line N"."""

    locations: dict[str, str] = field(default_factory=dict, compare=False, hash=False)


def first_bad_line(path: str | Path) -> tuple[int, int, int] | None:
    """(line, column, byte) of the first byte that is not UTF-8 in the file, or None when it all decodes."""
    data = Path(path).read_bytes()
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return number, exc.start + 1, line[exc.start]
    return None


def read_prompt_rows(path: str, prompt_column: str, checks_path: str | None):
    """`load_rows` with an undecodable byte reported as file, line and column."""
    try:
        return load_rows(path, prompt_column, checks_path)
    except UnicodeDecodeError:
        for candidate in [path, checks_path]:
            if candidate and Path(candidate).expanduser().is_file():
                bad = first_bad_line(Path(candidate).expanduser())
                if bad:
                    line, column, byte = bad
                    raise PromptFileError(
                        f"{candidate}, line {line}: byte 0x{byte:02x} at column {column} is not UTF-8; save the file "
                        f"as UTF-8 (for example `iconv -f latin1 -t utf-8 {candidate} > fixed{Path(candidate).suffix}`)"
                    ) from None
        raise


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
    rows = read_prompt_rows(path, prompt_column, checks_path)
    eval_rows = read_prompt_rows(eval_path, prompt_column, checks_path) if eval_path else None
    prompts = build_prompt_set(name or Path(path).stem, rows, eval_rows, eval_fraction, seed)
    locations: dict[str, str] = {}
    for row in [*rows, *(eval_rows or [])]:
        locations.setdefault(row.prompt, row.where)
    return LocatedPromptSet(prompts.name, prompts.train, prompts.eval, locations=locations)


@config_check
def check_bound_prompt_files() -> None:
    """Read every prompt file the parsed gin config binds to `datasets.file` (PromptFileError on a problem)."""
    import gin

    bound = {}
    for param in ("prompt_column", *PATH_PARAMS):
        try:
            bound[param] = gin.query_parameter(f"datasets.file.{param}")
        except ValueError:
            bound[param] = None
    if not isinstance(bound["path"], str):
        return
    column = bound["prompt_column"] if isinstance(bound["prompt_column"], str) else "prompt"
    checks = bound["checks_path"] if isinstance(bound["checks_path"], str) else None
    rows = read_prompt_rows(bound["path"], column, checks)
    if isinstance(bound["eval_path"], str):
        rows += read_prompt_rows(bound["eval_path"], column, checks)
    check_toy_checks(rows)


def check_toy_checks(rows: list[PromptRow]) -> None:
    """PromptFileError at the first check of `rows` that the trial's toy check readers cannot parse."""
    from tvrl_bench.world.checks import parse_check
    from tvrl_bench.world.declaration import served_worlds

    readers = [p.qualified for p in trial_components()
               if p.axis not in ("policy", "dataset") and served_worlds(p.target) is not None]
    if not readers:
        return
    for row in rows:
        for check in row.checks:
            try:
                parse_check(check)
            except ValueError:
                raise PromptFileError(
                    f"{row.where}: check {check!r} is not a toy-world check, and {' and '.join(readers)} "
                    f"read{'s' if len(readers) == 1 else ''} toy checks only; write it as the toy world asks ('Is the "
                    "top left object red?' in the slot world; 'Is there a red circle?', 'Does the red circle move "
                    "up?', 'Is the background black?' in the sprite world)") from None
