"""Sweep throughput: the same tiny study run with 1 and with 2 local workers, side by side in one run.

Each sweep starts from an empty tracking store and output folder, so both run every trial. Throughput is
trials per second of wall time (driver start-up, trial processes, tables at the end all included).

Last line: two_over_one=<throughput with 2 workers / throughput with 1 worker>.

    python benchmarks/sweep.py [--trials 6] [--steps 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def study_file(folder: Path, trials: int, steps: int) -> Path:
    seeds = list(range(trials // 2))
    text = "\n".join([
        "sweeps.study.name = 'throughput'",
        "sweeps.study.axes = {'credit': ['uniform', 'window3']}",
        f"sweeps.study.seeds = {seeds}",
        "sweeps.study.tables = ['samplers']",
        "sweeps.study.bindings = [",
        f"    'training.trial.steps = {steps}',",
        "    'training.trial.eval_prompts = 8',",
        "    'training.trial.sample_videos = 1',",
        "    'training.trial.wide_eval_prompts = 0',",  # the profile's ~600-prompt wide evaluation would dwarf the trials
        "]",
    ])
    path = folder / "throughput.gin"
    path.write_text(text + "\n")
    return path


def timed_sweep(study: Path, folder: Path, workers: int) -> float:
    command = [sys.executable, "-m", "tvrl_bench.cli.sweep", str(study), "--workers", str(workers), "--threads", "1",
               "--tracking-uri", f"sqlite:///{folder / 'mlflow.db'}", "--out", str(folder), "--no-progress"]
    started = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"sweep with {workers} worker(s) failed:\n{result.stderr[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=6, help="trials in the study (even; default 6)")
    parser.add_argument("--steps", type=int, default=3, help="optimizer steps per trial (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tvrl-bench-sweep-") as tmp:
        tmp = Path(tmp)
        study = study_file(tmp, args.trials, args.steps)
        one = timed_sweep(study, tmp / "one", 1)
        two = timed_sweep(study, tmp / "two", 2)
    print(f"{args.trials} trials x {args.steps} steps: 1 worker {one:.1f} s ({args.trials / one:.3f} trials/s), "
          f"2 workers {two:.1f} s ({args.trials / two:.3f} trials/s)")
    print(f"two_over_one={one / two:.2f}")


if __name__ == "__main__":
    main()
