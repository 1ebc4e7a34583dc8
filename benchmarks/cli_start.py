"""Start-up time of the console scripts: how long `--help` and `tvrl-bench list` take to answer, side by side.

Each command runs `--repeats` times in a fresh process from the repository root, the commands taking turns (round
after round), so that a machine shared with other work slows them alike; the median of each is reported. None
imports torch before it has parsed its arguments (tests/reliability/test_fast_start.py checks that): `tvrl-bench
list` reads the components from source (tvrl_bench/cli/static_listing.py, cached under $XDG_CACHE_HOME), measured
with its cache (`list`) and without (`list_cold`: a fresh empty cache each time). `import_components` is what a
listing through the registry would cost at least: importing every component module (torch and all).

    python benchmarks/cli_start.py [--repeats 5]

Last line: help_s=<tvrl-bench --help> list_s=<list, cached> list_cold_s=<list, no cache>
import_components_s=<importing the components> list_over_help=<list_s / help_s> help_s_max=<the slowest
`--help` or `list`> (medians, seconds); the line before gives each console script's --help.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tvrl_bench.cli.script import Scratch, UserError, at_least, run_script, scratch, script_parser

ROOT = Path(__file__).resolve().parent.parent
IMPORT_COMPONENTS = "from tvrl_bench import registry; registry.import_components()"


def script(name: str) -> str:
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise UserError(f"console script '{name}' is not installed: run `pip install -e .` first")
    return found


def commands() -> dict[str, tuple[list[str], bool]]:
    """{field: (command, with a fresh empty cache)} in the order they take turns."""
    helps = {f"{name.replace('-', '_')}_help": ([script(name), "--help"], False)
             for name in ("tvrl-train", "tvrl-sweep", "tvrl-report", "tvrl-bench")}
    return {**helps, "list": ([script("tvrl-bench"), "list"], False),
            "list_cold": ([script("tvrl-bench"), "list"], True),
            "import_components": ([sys.executable, "-c", IMPORT_COMPONENTS], False)}


def timed(children: Scratch, command: list[str], cold: bool) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory(dir=children.folder) as cache:
        if cold:
            env["XDG_CACHE_HOME"] = cache
        started = time.perf_counter()
        try:
            result = children.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            raise UserError(f"{' '.join(command)} did not answer in 120 s") from None
        took = time.perf_counter() - started
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        raise UserError(f"{' '.join(command)} failed (exit {result.returncode}): {lines[-1] if lines else 'no output'}")
    return took


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--repeats", type=int, default=5, action=at_least(1),
                        help="rounds; each command runs once a round and its median counts (default 5)")
    return run_script(parser, benchmark, argv)


def benchmark(args: argparse.Namespace) -> None:
    print(f"machine load (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    todo = commands()
    times: dict[str, list[float]] = {field: [] for field in todo}
    with scratch("tvrl-cli-start-") as children:
        timed(children, todo["list"][0], False)  # the cache written once, as after an install
        for _ in range(args.repeats):
            for field, (command, cold) in todo.items():
                times[field].append(timed(children, command, cold))
    median = {field: statistics.median(values) for field, values in times.items()}
    for field, values in times.items():
        print(f"{field:<20} median {median[field]:.3f} s  (min {min(values):.3f}, max {max(values):.3f}, "
              f"{len(values)} runs)")
    print(" ".join(f"{field}_s={median[field]:.3f}" for field in todo if field.endswith("_help")))
    answers = [median[f] for f in todo if f.endswith("_help")] + [median["list"], median["list_cold"]]
    print(f"help_s={median['tvrl_bench_help']:.3f} list_s={median['list']:.3f} list_cold_s={median['list_cold']:.3f} "
          f"import_components_s={median['import_components']:.3f} "
          f"list_over_help={median['list'] / median['tvrl_bench_help']:.2f} help_s_max={max(answers):.3f}")


if __name__ == "__main__":
    sys.exit(main())
