"""`tvrl-sweep STUDY.gin`: run every trial of a study (combinations x seeds), resumably, then its tables.

Flags, the study file and every trial's config are checked before the tracking store is touched or a trial
starts; every error is one line (`--debug` adds the traceback). Exit codes: 0 all finished, 1 a trial failed (or
a bug), 2 a mistake in the study, a flag or the tracking store, 130 stopped by a signal (rerun to resume).
"""

from __future__ import annotations

import argparse
import logging
import sys

from tvrl_bench.cli.common import add_tracking_uri, check_out_folder, run_main
from tvrl_bench.cli.errors import INTERRUPTED, UserError, add_debug_flag
from tvrl_bench.cli.sweep_executor import add_executor_flags
from tvrl_bench.tracking.store import DEFAULT_TRACKING_URI


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
    add_executor_flags(parser)
    add_tracking_uri(parser, help="MLflow tracking URI: a SQLite file or an http:// tracking server "
                     f"(default: $MLFLOW_TRACKING_URI, else {DEFAULT_TRACKING_URI})")
    parser.add_argument("--profile", help="run the study on another profile: a name the study maps (toy, paper) or a file")
    parser.add_argument("--steps", type=int, help="override every trial's optimizer steps")
    parser.add_argument("--max-attempts", type=int, default=2, help="tries per trial before it is recorded FAILED (default 2)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the trials, which are already done, and the expected cost of the rest: trials "
                        "left and their wall time with --workers, from the study's finished runs in the store, else "
                        "reference figures (docs/performance.md); run nothing")
    parser.add_argument("--out", default=".", help="folder for runs/ (checkpoints), logs/ and reports/ (default: .)")
    parser.add_argument("--no-tables", action="store_true", help="do not regenerate the study's tables at the end")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_debug_flag(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_main("tvrl-sweep", build_parser(), _sweep, argv, keep_uri=True)


def check_flags(args: argparse.Namespace) -> None:
    """Flag values, before anything is planned or written."""
    if args.workers < 1:
        raise UserError(f"--workers {args.workers}: run at least 1 trial at a time")
    if args.threads is not None and args.threads < 1:
        raise UserError(f"--threads {args.threads}: give each trial 1 or more torch threads")
    if args.max_attempts < 1:
        raise UserError(f"--max-attempts {args.max_attempts}: give each trial at least 1 attempt")
    if args.steps is not None and args.steps < 0:
        raise UserError(f"--steps {args.steps}: give 0 (evaluate only) or more optimizer steps")
    for flag, value in (("--nodes-per-trial", args.nodes_per_trial), ("--processes-per-node", args.processes_per_node)):
        if value is not None and value < 1:
            raise UserError(f"{flag} {value}: give 1 or more (a trial runs on nodes x processes-per-node processes)")
    if args.cpus_per_trial is not None and args.cpus_per_trial <= 0:
        raise UserError(f"--cpus-per-trial {args.cpus_per_trial}: give a positive number of CPUs")
    check_out_folder(args.out, "runs/, logs/ and reports/")


def _sweep(args: argparse.Namespace) -> int:
    check_flags(args)
    from tvrl_bench.config import resolve

    resolve(args.study)  # a missing study file is reported before torch is imported
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from tvrl_bench.sweeps.driver import SweepOptions, plan, run_sweep
    from tvrl_bench.tracking.store import check_store

    options = SweepOptions(
        tracking_uri=args.tracking_uri,
        out_dir=args.out,
        profile=args.profile,
        steps=args.steps,
        max_attempts=args.max_attempts,
        dry_run=args.dry_run,
        workers=args.workers,
        progress=not args.no_progress,
        regenerate_tables=not args.no_tables,
    )
    planned = plan(args.study, options)  # every config error before the tracking store is touched
    check_store(args.tracking_uri, write=not args.dry_run)

    from tvrl_bench.cli.sweep_executor import build, print_job_script

    summary = run_sweep(args.study, lambda: build(args, planned[1]), options, planned)
    if args.dry_run:
        if args.executor == "slurm":  # the settings checked against the cluster, and the first job's script
            executor = build(args, planned[1])
            try:
                print_job_script(executor, *planned, options)
            finally:
                executor.shutdown()
        return 0
    if summary.signal is not None:
        print(f"tvrl-sweep: {summary.line()}", file=sys.stderr)
        _print_links(summary)
        return INTERRUPTED
    print(summary.line())
    for line in summary.decision_lines():
        print(line)
    for spec in summary.failed:
        print(f"  FAILED {spec.key} {spec.title}: {summary.errors.get(spec.key, 'see its log')}", file=sys.stderr)
    if summary.reports:
        for name, table in summary.reports.get("tables", {}).items():
            print(f"  table {name}: {', '.join(str(f) for f in table['files'])}")
        from tvrl_bench.report.study_page import page_lines

        for line in page_lines(summary.reports.get("page")):
            print(line)
    _print_links(summary)
    if summary.failed:
        return 1
    from tvrl_bench.cli.report import page_failure

    failure = page_failure((summary.reports or {}).get("page"), "every trial finished and the tables are written",
                           args.debug)
    if failure is not None:  # after the links: the last line says what is missing
        print(f"tvrl-sweep: error: {failure[0]}", file=sys.stderr)
        return failure[1]
    return 0


def _print_links(summary) -> None:
    """The study's runs and chart view in MLflow's UI, as the last lines."""
    if summary.links is not None:
        print("\n".join(summary.links.lines()), flush=True)


if __name__ == "__main__":
    sys.exit(main())
