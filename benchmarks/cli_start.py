"""Start-up time of the console scripts: how long `--help` and `tvrl-bench list` take to answer.

Each command runs `--repeats` times in a fresh process from the repository root (the best of them is reported, since
other processes share the machine's cores); none should import torch before it has parsed its arguments
(tests/reliability/test_fast_start.py checks that), so each answers in well under half a second on the reference
machine. Timings are measured here, never asserted in tests.

    python benchmarks/cli_start.py [--repeats 3]

Last line: help_s_max=<the slowest command's best time> (one `<command>_s=<best>` field per command before it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tvrl_bench.cli.script import Scratch, UserError, at_least, run_script, scratch, script_parser

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = [("tvrl-train", ["--help"]), ("tvrl-sweep", ["--help"]), ("tvrl-report", ["--help"]),
            ("tvrl-bench", ["list"])]


def script(name: str) -> str:
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise UserError(f"console script '{name}' is not installed: run `pip install -e .` first")
    return found


def best_time(children: Scratch, command: list[str], repeats: int) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        try:
            result = children.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            raise UserError(f"{' '.join(command)} did not answer in 120 s") from None
        best = min(best, time.perf_counter() - started)
        if result.returncode != 0 or not result.stdout:
            lines = result.stderr.strip().splitlines()
            raise UserError(f"{' '.join(command)} failed (exit {result.returncode}): {lines[-1] if lines else 'no output'}")
    return best


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--repeats", type=int, default=3, action=at_least(1),
                        help="runs per command; the best counts (default 3)")
    return run_script(parser, benchmark, argv)


def benchmark(args: argparse.Namespace) -> None:
    times = {}
    with scratch(None) as children:
        for name, extra in COMMANDS:
            times[f"{name} {' '.join(extra)}"] = best_time(children, [script(name), *extra], args.repeats)
    fields = " ".join(f"{label.split()[0].replace('-', '_')}_{label.split()[1].strip('-')}_s={s:.3f}"
                      for label, s in times.items())
    print(fields)
    print(f"help_s_max={max(times.values()):.3f}")


if __name__ == "__main__":
    sys.exit(main())
