"""Sweep throughput: the same tiny study run with 1 and with 2 local workers, side by side in one run.

Each sweep starts from an empty tracking store and output folder, so both run every trial. Throughput is
trials per second of wall time (driver start-up, trial processes, tables at the end all included).

Last line: two_over_one=<throughput with 2 workers / throughput with 1 worker>.

    python benchmarks/sweep.py [--trials 6] [--steps 3] [--profile components/profiles/toy.gin] [--gin_bindings ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tvrl_bench.cli.script import Scratch, UserError, at_least, must, run_script, scratch, script_parser
from tvrl_bench.world.declaration import DEFAULT_PROFILE

ROOT = Path(__file__).resolve().parent.parent


def study_file(folder: Path, trials: int, steps: int, profile: str, bindings: list[str]) -> Path:
    seeds = list(range(trials // 2))
    text = "\n".join([
        "sweeps.study.name = 'throughput'",
        f"sweeps.study.profile = {profile!r}",
        "sweeps.study.axes = {'credit': ['uniform', 'window3']}",
        f"sweeps.study.seeds = {seeds}",
        "sweeps.study.tables = ['samplers']",
        "sweeps.study.bindings = [",
        f"    'training.trial.steps = {steps}',",
        "    'training.trial.eval_prompts = 8',",
        "    'training.trial.sample_videos = 1',",
        "    'training.trial.wide_eval_prompts = 0',",  # the profile's 626-prompt wide evaluation would dwarf the trials
        *[f"    {b!r}," for b in bindings],
        "]",
    ])
    path = folder / "throughput.gin"
    path.write_text(text + "\n")
    return path


def timed_sweep(work: Scratch, study: Path, name: str, workers: int) -> float:
    folder = work.folder / name
    command = [sys.executable, "-m", "tvrl_bench.cli.sweep", str(study), "--workers", str(workers), "--threads", "1",
               "--tracking-uri", f"sqlite:///{folder / 'mlflow.db'}", "--out", str(folder), "--no-progress"]
    started = time.perf_counter()
    result = work.run(command, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        raise UserError(f"the sweep with {workers} worker(s) failed (exit {result.returncode}): "
                        f"{lines[-1] if lines else 'no output'}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--trials", type=int, default=6, action=must(lambda v: v >= 2 and v % 2 == 0, "an even number "
                        ">= 2 (uniform and window3 credit x seeds)"), help="trials in the study (even; default 6)")
    parser.add_argument("--steps", type=int, default=3, action=at_least(1), help="optimizer steps per trial (default 3)")
    parser.add_argument("--profile", default=DEFAULT_PROFILE,
                        help=f"the trials' profile (default: the default regime's, {DEFAULT_PROFILE})")
    parser.add_argument("--gin_bindings", nargs="*", default=[],
                        help="extra bindings of every trial, e.g. 'training.trial.prompts_per_step = 4'")
    return run_script(parser, benchmark, argv)


def benchmark(args: argparse.Namespace) -> None:
    import gin

    from tvrl_bench.config import load_config

    try:  # a config mistake in seconds, as the commands name it, before any sweep
        load_config([args.profile], args.gin_bindings)
    finally:
        gin.clear_config()
    with scratch("tvrl-bench-sweep-") as work:
        study = study_file(work.folder, args.trials, args.steps, args.profile, args.gin_bindings)
        one = timed_sweep(work, study, "one", 1)
        two = timed_sweep(work, study, "two", 2)
    print(f"{args.trials} trials x {args.steps} steps: 1 worker {one:.1f} s ({args.trials / one:.3f} trials/s), "
          f"2 workers {two:.1f} s ({args.trials / two:.3f} trials/s)")
    print(f"two_over_one={one / two:.2f}")


if __name__ == "__main__":
    sys.exit(main())
