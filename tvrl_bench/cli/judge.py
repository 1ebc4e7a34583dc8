"""`tvrl-bench judge`: a pairwise judge over a study's final samples, or (`--wide`) the exact evaluator's recorded
scores of the wide evaluation; the judgments feed the win-rate table."""

from __future__ import annotations

import argparse

from tvrl_bench.cli.common import add_tracking_uri
from tvrl_bench.cli.errors import UserError
from tvrl_bench.config import ConfigError

WIDE_JUDGE = "evaluator:wide"  # report/winrate/wide_pairs.py: WIDE_JUDGE (not imported: --help loads nothing)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "judge",
        help="judge method A against B on a study's final samples (win-rate study)",
        description=(
            "Pair the final samples of methods A and B (same seed, same prompt) from the study's MLflow runs, let a "
            "judge component pick the better video of each pair (sides shuffled), and store the judgments in the "
            "SQLite file tvrl-report reads for its winrate table. With --wide, pair the two runs' wide-evaluation "
            "records instead (one per held-out prompt) and let the evaluator's recorded scores decide."
        ),
        epilog="Examples: tvrl-bench judge --study samplers --judge components/judges/toy_evaluator.gin; "
               "tvrl-bench judge --study rewards --wide --match reward",
    )
    parser.add_argument("--study", required=True, help="the study (MLflow experiment)")
    parser.add_argument("--judge", metavar="JUDGE.gin",
                        help="a judge preset (components/judges/*.gin); required unless --wide")
    parser.add_argument("--wide", action="store_true",
                        help="judge by the wide evaluation instead: pair the two runs' wide_eval/results.json records "
                             "by prompt (k-th record of a prompt with the k-th) and take the exact evaluator's "
                             "recorded scores (A wins when its score is higher, loses when lower, ties when equal); "
                             f"stored as judge '{WIDE_JUDGE}', replacing that judge's earlier judgments of A and B. "
                             "Takes no --judge")
    parser.add_argument("--a", default="TVRL", help="method A (a method value or a filter like method=TVRL,credit=frame)")
    parser.add_argument("--b", default="GRPO", help="method B (same forms as --a)")
    add_tracking_uri(parser, help="MLflow tracking URI (default $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)")
    parser.add_argument("--store", default="reports/judgments.sqlite", help="judgments file (default reports/judgments.sqlite)")
    parser.add_argument("--match", default="policy,sampler,reward", help="params paired trials share besides the seed")
    parser.add_argument("--gin_bindings", "--gin-bindings", nargs="+", action="extend", default=[], metavar="B",
                        help="extra gin bindings for the judge preset (not with --wide)")
    parser.set_defaults(run=run)


def _side(text: str) -> str | dict[str, str]:
    return dict(part.split("=", 1) for part in text.split(",")) if "=" in text else text


def run(args: argparse.Namespace) -> int:
    if args.wide and (args.judge or args.gin_bindings):
        raise UserError("--wide judges by the evaluator's recorded wide-evaluation scores: drop --judge and "
                        "--gin_bindings, or drop --wide to run the judge preset on the final samples")
    if not args.wide and not args.judge:
        raise UserError("give a judge preset, e.g. --judge components/judges/toy_evaluator.gin, or --wide to judge "
                        "by the wide evaluation's recorded scores")
    sides = _side(args.a), _side(args.b)
    match = tuple(m for m in args.match.split(",") if m)
    if args.wide:
        from tvrl_bench.report.winrate.wide_pairs import judge_wide

        judgments = judge_wide(args.study, *sides, store=args.store, tracking_uri=args.tracking_uri, match=match)
    else:
        from tvrl_bench import registry
        from tvrl_bench.config import load_config
        from tvrl_bench.report.winrate.pairs import judge_study

        try:
            load_config([args.judge], args.gin_bindings)
            judge = registry.build("JUDGE")
        except ConfigError as exc:
            print(f"tvrl-bench judge: config error:\n{exc}")
            return 2
        judgments = judge_study(args.study, judge, *sides, store=args.store, tracking_uri=args.tracking_uri,
                                match=match)
    wins = sum(j.verdict == "win" for j in judgments)
    losses = sum(j.verdict == "loss" for j in judgments)
    print(f"{len(judgments)} judgments stored in {args.store}: A wins {wins}, B wins {losses}, ties {len(judgments) - wins - losses}")
    print(f"render the table: tvrl-report --study {args.study} --tables winrate --judgments {args.store}")
    return 0
