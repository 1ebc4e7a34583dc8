"""`tvrl-bench`: the umbrella command (list components, prepare the toy world, annotate, ...).

Each subcommand lives in its own module exposing `add_parser(subparsers)`; the module is listed in SUBCOMMANDS.
Subcommand modules import torch and components only when they run, so `--help` answers at once. Every
subcommand takes `--debug`; an error ends in one line on stderr (tvrl_bench.cli.errors).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tvrl_bench.cli.common import run_main
from tvrl_bench.cli.errors import add_debug_flag
from tvrl_bench.cli.script import stops_interrupt

SUBCOMMANDS = [
    "tvrl_bench.cli.list_components",
    "tvrl_bench.cli.judge",
    "tvrl_bench.cli.vbench2",
    "tvrl_bench.cli.decompose",
    "tvrl_bench.cli.prepare_toy",
    "tvrl_bench.cli.critic_card",
    "tvrl_bench.cli.annotate",
    "tvrl_bench.cli.wide_eval",
    "tvrl_bench.cli.record",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvrl-bench",
        description="tvrl-bench: component registry and tools for token-level video RL benchmarks.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        importlib.import_module(module).add_parser(subparsers)
    for sub in subparsers.choices.values():
        if not any("--debug" in a.option_strings for a in sub._actions):
            add_debug_flag(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a subcommand. SIGTERM and SIGHUP stop it as Ctrl-C does (its `with` blocks clean up, one line), with
    exit 128 + the signal's number, also when the subcommand ends on its own after one (annotate's server stops
    on a signal and says so)."""
    with stops_interrupt() as received:
        code = run_main(lambda args: f"tvrl-bench {args.command}", build_parser(), lambda args: args.run(args), argv)
    return 128 + received[0] if received and code == 0 else code


if __name__ == "__main__":
    sys.exit(main())
