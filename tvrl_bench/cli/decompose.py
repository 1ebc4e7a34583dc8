"""`tvrl-bench decompose PROMPTS --model PATH --out CHECKS.jsonl`: an LLM writes yes/no checks for each prompt."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "decompose",
        help="write yes/no checks for prompts with a text LLM (cached, resumable)",
        description=(
            "Ask a text LLM (a local Qwen3.5 checkpoint; chat template with thinking off, greedy decoding) to write "
            "yes/no checks for each prompt, and append them to a JSONL cache ({'prompt', 'checks', 'raw', 'model'} "
            "per line). Prompts already in the cache are skipped, so an interrupted run resumes. The cache works "
            "as a prompt file (datasets.file) and as any prompt loader's checks_path."
        ),
    )
    parser.add_argument(
        "prompts",
        metavar="PROMPTS",
        nargs="?",
        help="prompt file: CSV with a header (see --column), JSONL with a 'prompt' key, a .txt with one prompt per "
        "line, or a VBench-2.0 folder (its whole prompt suite)",
    )
    parser.add_argument("--model", metavar="PATH", help="local folder of the LLM checkpoint (Qwen3.5)")
    parser.add_argument("--out", metavar="CHECKS.jsonl", help="the checks cache to create or extend")
    parser.add_argument(
        "--format", default="lines", choices=["lines", "json5"],
        help="'lines': at most --max-checks numbered questions (ours); 'json5': the official format, exactly "
        "--exact checks as a JSON array q1..qN with an all-'Yes' target, repaired by asking again (--repairs)",
    )
    parser.add_argument("--exact", type=int, default=5, metavar="N", help="checks per prompt with --format json5 (5)")
    parser.add_argument("--repairs", type=int, default=2, metavar="R", help="repair requests per prompt (json5; 2)")
    parser.add_argument(
        "--check", metavar="CHECKS.jsonl",
        help="only check a json5 cache: every prompt has exactly --exact checks q1..qN with target 'Yes' "
        "(prints the problems; exit status 1 if any)",
    )
    parser.add_argument("--max-checks", type=int, default=8, metavar="N", help="at most N checks per prompt (default 8)")
    parser.add_argument("--batch-size", type=int, default=8, metavar="B", help="prompts per generation batch (default 8)")
    parser.add_argument(
        "--max-new-tokens", type=int, default=256, metavar="T", help="generation length limit per prompt (default 256)"
    )
    parser.add_argument(
        "--column", default="prompt", help="the prompt column of a CSV / key of a JSONL (default 'prompt'; "
        "VideoAlign's videogen_eval.csv also has 'prompt_shorter' and 'prompt_zh')"
    )
    parser.add_argument("--device", default="auto", help="torch device (default: cuda when available, else cpu)")
    parser.add_argument(
        "--dtype", default="auto", choices=["auto", "bfloat16", "float16", "float32"],
        help="model dtype (default: bfloat16 on CUDA, float32 on CPU)",
    )
    parser.add_argument("--retry-empty", action="store_true", help="redo prompts cached without any check")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(run=run)


def read_prompts(path: str, column: str) -> list[str]:
    """The prompts of a prompt file, or of a VBench-2.0 folder's suite."""
    if Path(path).expanduser().is_dir():
        from tvrl_bench.datasets.vbench2 import suite_entries

        return [e.prompt for e in suite_entries(path)]
    from tvrl_bench.datasets.rows import read_rows

    return [row.prompt for row in read_rows(path, column)]


def check(path: str, n: int) -> int:
    """`--check`: print every record of a json5 cache that breaks the exact-n format; 1 if any, else 0."""
    from tvrl_bench.datasets.decompose_exact import check_cache

    try:
        bad = check_cache(path, n)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for prompt, found in bad.items():
        print(f"{prompt!r}: {'; '.join(found)}")
    print(f"{path}: {len(bad)} prompt(s) break the exact-{n} format")
    return 1 if bad else 0


def run(args: argparse.Namespace) -> int:
    from tvrl_bench.datasets.decompose import CheckWriter, decompose
    from tvrl_bench.datasets.decompose_exact import decompose_exact

    if args.check:
        return check(args.check, args.exact)
    missing = [flag for flag, value in (("PROMPTS", args.prompts), ("--model", args.model), ("--out", args.out)) if not value]
    if missing:
        print(f"error: decompose needs {', '.join(missing)} (or --check CHECKS.jsonl)", file=sys.stderr)
        return 2
    try:
        prompts = read_prompts(args.prompts, args.column)
        if args.format == "json5":
            stats = decompose_exact(
                prompts, args.out, writer=lambda: CheckWriter(args.model, args.device, args.dtype, args.max_new_tokens),
                n=args.exact, repairs=args.repairs, batch_size=args.batch_size, model_name=str(args.model),
            )
            print(f"{args.out}: generated {stats.generated}, cached {stats.cached}, invalid after repairs {stats.empty}")
            return 0
        stats = decompose(
            prompts,
            args.out,
            writer=lambda: CheckWriter(args.model, args.device, args.dtype, args.max_new_tokens),
            max_checks=args.max_checks,
            batch_size=args.batch_size,
            retry_empty=args.retry_empty,
            progress=not args.no_progress,
            model_name=str(args.model),
        )
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{args.out}: generated {stats.generated}, cached {stats.cached}, without checks {stats.empty}")
    if stats.empty:
        print(
            f"warning: {stats.empty} prompt(s) got no parsable check (see their 'raw' answers in {args.out}); "
            "rerun with --retry-empty, a larger --max-new-tokens or another model",
            file=sys.stderr,
        )
    return 0
