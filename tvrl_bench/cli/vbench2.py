"""`tvrl-bench vbench2 setup|score`: build VBench-2.0's environment; aggregate VBench-2.0 results files."""

from __future__ import annotations

import argparse
import sys

# tvrl_bench.evaluators.vbench2.spec.MISSING_POLICIES, written out so that building the parser imports no torch.
MISSING_POLICIES = ("error", "zero", "partial")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "vbench2",
        help="VBench-2.0: build its environment, score its results",
        description="VBench-2.0 tools: `setup` builds its own Python environment, `score` aggregates results files.",
    )
    commands = parser.add_subparsers(dest="vbench2_command", metavar="ACTION", required=True)

    setup = commands.add_parser(
        "setup",
        help="create VBench-2.0's Python environment (needs network access)",
        description=(
            "Create VBench-2.0's own Python environment (a venv with its pinned torch 2.5.1+cu118, transformers "
            "4.51.0, numpy 1.26.3, diffusers 0.32.1, flash-attn, mmcv, ...), following VBench-2.0's README. "
            "NEEDS NETWORK ACCESS (PyPI, PyTorch's and OpenMMLab's wheel indexes, GitHub) and CUDA 11.8 with a "
            "recent gcc to compile flash-attn. Afterwards set evaluators.vbench2.env_dir = DIR."
        ),
    )
    setup.add_argument("--env", required=True, metavar="DIR", help="folder of the new environment (created)")
    setup.add_argument(
        "--repo",
        default=None,
        metavar="PATH_OR_URL",
        help="a Vchitect/VBench checkout (its root or its VBench-2.0 folder), or a git URL to clone into "
        "DIR/src/VBench (default: the GitHub repository)",
    )
    setup.add_argument(
        "--python",
        default="python3.10",
        metavar="EXE",
        help="the base interpreter that creates the venv; VBench-2.0 is pinned for Python 3.10 (default: python3.10)",
    )
    setup.add_argument("--dry-run", action="store_true", help="print the commands without running them")
    setup.set_defaults(run=run_setup)

    score = commands.add_parser(
        "score",
        help="print the categories and Overall of VBench-2.0 results files",
        description=(
            "Aggregate VBench-2.0 results (files `*_eval_results.json` written by its evaluate.py, or folders "
            "holding them) as VBench-2.0's cal_final_score.py does: category = mean of its dimensions, overall = "
            "mean of the 5 categories. Prints name=value lines on VBench-2.0's 0-1 scale, `overall=` last."
        ),
    )
    score.add_argument("results", nargs="+", metavar="RESULTS", help="results JSON files or folders searched for them")
    score.add_argument(
        "--missing",
        choices=MISSING_POLICIES,
        default="error",
        help="absent dimensions: 'error' (default) refuses; 'zero' counts them as 0 like VBench-2.0's "
        "cal_final_score.py; 'partial' averages the present dimensions only (not comparable to published totals)",
    )
    score.add_argument("--dimensions", action="store_true", help="also print every dimension (dim/<name>=value) first")
    score.set_defaults(run=run_score)


def run_setup(args: argparse.Namespace) -> int:
    from tvrl_bench.evaluators.vbench2.env import DEFAULT_REPO, SetupError, run_setup as setup, setup_steps

    repo = args.repo or DEFAULT_REPO
    if args.dry_run:
        for step in setup_steps(args.env, repo, args.python):
            print(f"# {step.name}\n{step.describe()}")
        return 0
    try:
        marker = setup(args.env, repo, args.python)
    except SetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"VBench-2.0 environment ready: {marker}\nset evaluators.vbench2.env_dir = '{args.env}'")
    return 0


def run_score(args: argparse.Namespace) -> int:
    from tvrl_bench.evaluators.vbench2.results import ResultsError, aggregate, load_results, score_lines

    try:
        results = load_results(args.results)
        metrics = aggregate({d: r.score for d, r in results.items()}, args.missing)
    except ResultsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("\n".join(score_lines(metrics, dimensions=args.dimensions)))
    return 0
