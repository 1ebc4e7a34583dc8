"""`tvrl-sweep STUDY.gin`: run every trial of a study (combinations x seeds), resumably, then its tables."""

from __future__ import annotations

import argparse
import logging
import sys

from tvrl_bench.config import ConfigError
from tvrl_bench.sweep.driver import SweepOptions, run_sweep
from tvrl_bench.tracking.mlflow_run import DEFAULT_TRACKING_URI


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvrl-sweep",
        description=(
            "Run a study: every combination of its axes' presets x its seeds, each trial in its own process, logged "
            "to MLflow under one parent run; then regenerate the study's tables. Rerunning the same command resumes: "
            "finished trials are skipped and interrupted ones continue from their checkpoints."
        ),
        epilog="Example: tvrl-sweep sweeps/quickstart.gin --tracking-uri sqlite:///q.db --out OUT",
    )
    parser.add_argument("study", metavar="STUDY.gin", help="the study file (sweeps/*.gin)")
    parser.add_argument("--workers", type=int, default=2, help="trials run at once by the local executor (default 2)")
    parser.add_argument("--threads", type=int, help="torch threads per trial (default: CPU cores / workers)")
    parser.add_argument("--executor", choices=["local", "ray"], default="local", help="local processes (default) or a Ray cluster")
    parser.add_argument("--address", default="auto", help="Ray cluster address HOST:PORT (with --executor ray; default auto)")
    parser.add_argument("--cpus-per-trial", type=float, default=1.0, help="CPUs each Ray task asks for (default 1)")
    parser.add_argument(
        "--tracking-uri", default=DEFAULT_TRACKING_URI,
        help=f"MLflow tracking URI: a SQLite file or an http:// tracking server (default {DEFAULT_TRACKING_URI})",
    )
    parser.add_argument("--profile", help="run the study on another profile: a name the study maps (toy, paper) or a file")
    parser.add_argument("--steps", type=int, help="override every trial's optimizer steps")
    parser.add_argument("--max-attempts", type=int, default=2, help="tries per trial before it is recorded FAILED (default 2)")
    parser.add_argument("--dry-run", action="store_true", help="print the trials and which are already done; run nothing")
    parser.add_argument("--out", default=".", help="folder for runs/ (checkpoints), logs/ and reports/ (default: .)")
    parser.add_argument("--no-tables", action="store_true", help="do not regenerate the study's tables at the end")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    options = SweepOptions(
        tracking_uri=args.tracking_uri,
        out_dir=args.out,
        profile=args.profile,
        steps=args.steps,
        max_attempts=args.max_attempts,
        dry_run=args.dry_run,
        progress=not args.no_progress,
        regenerate_tables=not args.no_tables,
    )

    def executor():
        if args.executor == "ray":
            from tvrl_bench.sweep.executors.ray_executor import RayExecutor

            return RayExecutor(args.address, args.cpus_per_trial, args.threads or 1)
        from tvrl_bench.sweep.executors.local import LocalExecutor

        return LocalExecutor(args.workers, args.threads)

    try:
        summary = run_sweep(args.study, executor, options)
    except ConfigError as exc:
        print(f"tvrl-sweep: config error (nothing was run):\n{exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        return 0
    print(summary.line())
    for spec in summary.failed:
        print(f"  FAILED {spec.key} {spec.title}", file=sys.stderr)
    if summary.reports:
        for name, table in summary.reports.get("tables", {}).items():
            print(f"  table {name}: {', '.join(str(f) for f in table['files'])}")
    return 1 if summary.failed else 0


if __name__ == "__main__":
    sys.exit(main())
