"""`tvrl-bench judge`: a pairwise judge over a study's final samples; the judgments feed the win-rate table."""

from __future__ import annotations

import argparse

from tvrl_bench.cli.common import add_tracking_uri
from tvrl_bench.config import ConfigError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "judge",
        help="judge method A against B on a study's final samples (win-rate study)",
        description=(
            "Pair the final samples of methods A and B (same seed, same prompt) from the study's MLflow runs, let a "
            "judge component pick the better video of each pair (sides shuffled), and store the judgments in the "
            "SQLite file tvrl-report reads for its winrate table."
        ),
    )
    parser.add_argument("--study", required=True, help="the study (MLflow experiment)")
    parser.add_argument("--judge", required=True, metavar="JUDGE.gin", help="a judge preset (components/judges/*.gin)")
    parser.add_argument("--a", default="TVRL", help="method A (a method value or a filter like method=TVRL,credit=frame)")
    parser.add_argument("--b", default="GRPO", help="method B (same forms as --a)")
    add_tracking_uri(parser, help="MLflow tracking URI (default $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)")
    parser.add_argument("--store", default="reports/judgments.sqlite", help="judgments file (default reports/judgments.sqlite)")
    parser.add_argument("--match", default="policy,sampler,reward", help="params paired trials share besides the seed")
    parser.add_argument("--gin_bindings", "--gin-bindings", nargs="+", action="extend", default=[], metavar="B",
                        help="extra gin bindings for the judge preset")
    parser.set_defaults(run=run)


def _side(text: str) -> str | dict[str, str]:
    return dict(part.split("=", 1) for part in text.split(",")) if "=" in text else text


def run(args: argparse.Namespace) -> int:
    from tvrl_bench import registry
    from tvrl_bench.config import load_config
    from tvrl_bench.report.winrate.pairs import judge_study

    try:
        load_config([args.judge], args.gin_bindings)
        judge = registry.build("JUDGE")
    except ConfigError as exc:
        print(f"tvrl-bench judge: config error:\n{exc}")
        return 2
    judgments = judge_study(
        args.study, judge, _side(args.a), _side(args.b), store=args.store, tracking_uri=args.tracking_uri,
        match=tuple(m for m in args.match.split(",") if m),
    )
    wins = sum(j.verdict == "win" for j in judgments)
    losses = sum(j.verdict == "loss" for j in judgments)
    print(f"{len(judgments)} judgments stored in {args.store}: A wins {wins}, B wins {losses}, ties {len(judgments) - wins - losses}")
    print(f"render the table: tvrl-report --study {args.study} --tables winrate --judgments {args.store}")
    return 0
