"""`tvrl-bench`: the umbrella command (list components, prepare the toy world, annotate, ...).

Each subcommand lives in its own module exposing `add_parser(subparsers)`; the module is listed in SUBCOMMANDS.
"""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS = [
    "tvrl_bench.cli.list_components",
    "tvrl_bench.cli.judge",
    "tvrl_bench.cli.vbench2",
    "tvrl_bench.cli.decompose",
    "tvrl_bench.cli.prepare_toy",
    "tvrl_bench.cli.annotate",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvrl-bench",
        description="tvrl-bench: component registry and tools for token-level video RL benchmarks.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        importlib.import_module(module).add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
