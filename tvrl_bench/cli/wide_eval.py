"""`tvrl-bench wide-eval STUDY.gin --out DIR --prompts N`: score a finished toy study's final policies on more
held-out prompts than its trials evaluated, and pair every arm with the base seed by seed.

Everything that can be refused is refused before the minutes of scoring: the flags, every output (the --csv file,
OUT/reports/<study>/, the tracking store), --prompts against each trial, and every trial's finished checkpoint
(naming the --steps or --profile the sweep ran with when the trials on disk have other keys). What was scored is
logged to MLflow before any file is written, so a file that fails to be written loses no score."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from tvrl_bench.cli.common import add_tracking_uri, check_out_file, check_out_folder


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "wide-eval",
        help="re-score a finished toy study's final policies on more held-out prompts (paired with the base)",
        description=(
            "Load the final checkpoint of every trial of a finished toy study and generate, with the trial's own "
            "evaluation noise, the first N prompts of the toy dataset's eval split drawn with n_eval = N, leaving out "
            "any scene the trial trained on. The first eval_prompts of them are the trial's own eval prompts, so "
            "the 'own' table reproduces the study's final evaluation exactly; the 'wide' table is the same "
            "policies on N prompts, with less generation noise. Prints both tables (overall x 100, each arm's "
            "paired difference from the base of its seed, 95%% t-interval), logs the wide scores to each trial's "
            "MLflow run as wide_eval/<metric> (tag tvrl.wide_eval_prompts) and regenerates the study's tables, "
            "which read wide_eval/* where the runs have it, into OUT/reports/<study>/."
        ),
        epilog="Example: tvrl-bench wide-eval sweeps/experiments/power_v2.gin --out OUT --tracking-uri sqlite:///OUT/mlflow.db "
               "--prompts 1000",
    )
    parser.add_argument("study", metavar="STUDY.gin", help="the study file the sweep ran (sweeps/*.gin)")
    parser.add_argument("--out", default=".", help="the sweep's --out folder, which holds runs/<study>/ (default: .)")
    parser.add_argument("--profile", help="the --profile the sweep ran with, if any")
    parser.add_argument("--steps", type=int, metavar="N",
                        help="the --steps the sweep ran with, if any (its trials' keys include it)")
    parser.add_argument("--prompts", type=int, default=512, metavar="N",
                        help="wider eval prompts per trial before removing trained scenes (default 512)")
    parser.add_argument("--workers", type=int, default=2,
                        help="trials scored at once, one torch thread each (default 2)")
    parser.add_argument("--csv", metavar="PATH", help="also write every trial's own and wide metrics to this CSV file")
    add_tracking_uri(parser, help="the MLflow store the sweep wrote to, where the wide scores are logged (default: "
                                  "$MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)")
    parser.add_argument("--no-log", action="store_true",
                        help="print (and --csv) only: log nothing to MLflow and write no tables")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


def check_flags(args: argparse.Namespace) -> None:
    """UserError for a flag out of range, before the study is read."""
    from tvrl_bench.cli.errors import UserError

    if args.prompts < 1:
        raise UserError(f"--prompts {args.prompts}: give the number of wider eval prompts per trial, e.g. --prompts 1000")
    if args.workers < 1:
        raise UserError(f"--workers {args.workers}: give 1 or more processes, e.g. --workers 2")
    if args.steps is not None and args.steps < 0:
        raise UserError(f"--steps {args.steps}: give the --steps the sweep ran with (0 or more), or leave it out")
    if args.csv:
        check_out_file(args.csv, "every trial's own and wide metrics", "--csv", "wide_eval.csv")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UserError(f"--out {args.out}: this is a file; pass the sweep's --out folder (it holds runs/<study>/)")


def check_outputs(args: argparse.Namespace, study_name: str) -> None:
    """UserError naming the flag when an output of a logging wide-eval cannot be written: OUT/reports/<study>/ for
    the tables, the tracking store for the scores (checked for a write, seconds)."""
    if args.no_log:
        return
    check_out_folder(str(Path(args.out) / "reports" / study_name), "the study's tables and page")
    from tvrl_bench.report.runs.study import resolve_tracking_uri
    from tvrl_bench.tracking.store import check_store

    check_store(resolve_tracking_uri(args.tracking_uri), write=True)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from tvrl_bench.sweeps.plan import expand, load_study
    from tvrl_bench.sweeps.wide_eval import score_trial
    from tvrl_bench.sweeps.wide_eval_flags import check_finished
    from tvrl_bench.sweeps.wide_eval_run import Stopped, check_request, score_all, study_lock

    check_flags(args)
    study, resolved = load_study(args.study, args.profile)
    specs = expand(study, resolved, [f"training.trial.steps = {args.steps}"] if args.steps is not None else [])
    runs = str(Path(args.out) / "runs" / study.name)
    check_request(specs, args.prompts)  # --prompts against each trial's own eval prompts and its world, in seconds
    check_finished(specs, Path(runs), args.study, args.profile, args.steps)  # one line naming the first that is not
    check_outputs(args, study.name)
    lock = None if args.no_log else study_lock(runs, study.name).acquire()  # one logging wide-eval per study
    try:
        if not args.no_log:  # and the store to log to holds a finished run of each
            from tvrl_bench.report.runs.study import resolve_tracking_uri
            from tvrl_bench.sweeps.wide_eval import trial_runs

            uri = resolve_tracking_uri(args.tracking_uri)
            run_ids = trial_runs(uri, study.name, specs)
        try:
            scores = score_all(score_trial, specs, runs, args.prompts, args.workers,
                               announced if args.no_progress else
                               lambda futures, total: tqdm(futures, total=total, desc="trials"))
        except Stopped as stop:
            print(f"tvrl-bench wide-eval: stopped by {stop}: its workers are stopped and nothing was logged; rerun "
                  "to score the study", file=sys.stderr)
            return 130
        return report(args, study, specs, scores, None if args.no_log else (uri, run_ids))
    finally:
        if lock is not None:
            lock.release()


def announced(futures, total: int):
    """The scored trials as they finish, each said in a line on stderr (--no-progress: no bar, never silent)."""
    import time

    started = time.perf_counter()
    print(f"tvrl-bench wide-eval: scoring {total} trials", file=sys.stderr, flush=True)
    for done, future in enumerate(futures, start=1):
        yield future
        print(f"tvrl-bench wide-eval: {done} of {total} trials scored ({time.perf_counter() - started:.0f} s)",
              file=sys.stderr, flush=True)


def report(args: argparse.Namespace, study, specs, scores, logging_to) -> int:
    """Print the own and wide tables, log the scores (`logging_to`: (uri, run ids) or None), then write the CSV and
    the tables; the exit code (2 when the study page could not be written, the scores logged all the same)."""
    from tvrl_bench.sweeps.wide_eval import format_rows, log_scores, paired_rows

    order = {spec.key: i for i, spec in enumerate(specs)}
    scores.sort(key=lambda s: order[s.spec.key])
    print(format_rows(paired_rows(scores, "own"), f"{study.name}: the trials' own eval prompts (overall x 100)"))
    print()
    counts = sorted({s.prompts for s in scores})
    print(format_rows(paired_rows(scores, "wide"),
                      f"{study.name}: {'/'.join(map(str, counts))} wider held-out prompts (overall x 100; "
                      f"{max(s.dropped for s in scores)} at most dropped as trained scenes)"))
    if logging_to is not None:  # the scores first: a file that fails below loses none of them
        uri, run_ids = logging_to
        logged = log_scores(uri, run_ids, scores)
        held = f" ({len(run_ids) - logged} already held these scores: not logged again)" if logged < len(run_ids) else ""
        print(f"\nlogged wide_eval/* to {logged} trial runs of '{study.name}' in {uri}{held}")
    if args.csv:
        write_csv(args.csv, scores, logged=logging_to is not None)
        print(f"wrote {args.csv}")
    return 0 if logging_to is None else regenerate_tables(args, logging_to[0], study)


def regenerate_tables(args: argparse.Namespace, uri: str, study) -> int:
    """The study's tables (they read wide_eval/* where the runs have it) into OUT/reports like the sweep's own;
    the exit code: 2 (1 for a bug) when the study page could not be written."""
    from tvrl_bench.cli.report import page_failure
    from tvrl_bench.report import regenerate

    if not study.tables:
        print("the study names no tables (sweeps.study.tables); nothing to regenerate")
        return 0
    summary = regenerate(study.name, uri, Path(args.out) / "reports", list(study.tables))
    for name, table in summary["tables"].items():
        print(f"  {name}: {', '.join(table['files'])}")
    failure = page_failure(summary.get("page"), "the scores are logged and the tables written")
    if failure is None:
        return 0
    print(f"tvrl-bench wide-eval: error: {failure[0]}", file=sys.stderr)
    return failure[1]


def write_csv(path: str, scores, logged: bool = False) -> None:
    """One row per trial: its arm, seed, key, prompt count and every own_* and wide_* metric; written to a
    temporary file beside `path`, then renamed (a UserError naming --csv when it cannot be)."""
    import io
    import os

    from tvrl_bench.cli.errors import UserError

    keys = sorted({k for s in scores for k in s.wide})
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(["arm", "seed", "key", "prompts", "dropped", *(f"own_{k}" for k in keys),
                     *(f"wide_{k}" for k in keys)])
    for s in scores:
        writer.writerow([s.arm, s.spec.seed, s.spec.key, s.prompts, s.dropped,
                         *(s.own.get(k) for k in keys), *(s.wide.get(k) for k in keys)])
    temporary = Path(f"{path}.{os.getpid()}.tmp")
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(out.getvalue(), newline="")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        kept = "the scores are logged to MLflow and printed above" if logged else "the scores are printed above"
        raise UserError(f"--csv {path}: {exc.strerror or exc}; {kept}; pass a file you can write") from None
