"""`tvrl-train CONFIG.gin`: run one trial (train, evaluate, log to MLflow), resuming it if it was interrupted.

Arguments are parsed before torch or any component is imported, so `--help` and flag errors answer at once.
Every error ends in one line on stderr (`--debug` shows the traceback): exit 2 for a mistake in the config,
a file, a flag or the tracking store, 1 for a failed trial (or a bug), 130 when stopped by a signal.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys

from tvrl_bench.cli.common import add_tracking_uri, check_out_folder, run_main, set_torch_threads
from tvrl_bench.cli.errors import INTERRUPTED, UserError, add_debug_flag


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvrl-train",
        description=(
            "Run one TVRL trial from gin config files: sample rollouts, score them with the critic, route credit, "
            "update the policy, evaluate at the end, and log everything to MLflow. Rerunning the same config "
            "resumes an interrupted trial from its last checkpoint."
        ),
        epilog="Example: tvrl-train components/profiles/toy.gin --steps 3 --tracking-uri sqlite:///t.db",
    )
    parser.add_argument("configs", nargs="+", metavar="CONFIG.gin", help="gin files, parsed in order (later ones override)")
    parser.add_argument("--steps", type=int, help="optimizer steps (binds training.trial.steps; 0 = evaluate the untrained policy)")
    parser.add_argument("--seed", type=int, help="training and generation seed (binds training.trial.seed)")
    add_tracking_uri(parser)
    parser.add_argument("--experiment", default="trials", help="MLflow experiment name (default: trials)")
    parser.add_argument(
        "--gin_bindings", "--gin-bindings", nargs="+", action="extend", default=[], metavar="B",
        help="extra gin bindings applied after the files, e.g. 'samplers.sage.eta = 0.3'",
    )
    parser.add_argument("--out", default="runs", help="folder for checkpoints: OUT/EXPERIMENT/TRIAL_KEY (default: runs)")
    parser.add_argument("--cpu", action="store_true", help="force the CPU even when a GPU is available")
    parser.add_argument(
        "--threads", type=int, default=1,
        help="torch CPU threads for this process (default 1: several processes sharing a CPU contend badly)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (logs only)")
    add_debug_flag(parser)
    sweep = parser.add_argument_group("set by tvrl-sweep")
    sweep.add_argument("--study", help="study name: tags the run and prefixes its name")
    sweep.add_argument("--parent-run-id", help="MLflow run id of the study's parent run")
    sweep.add_argument(
        "--attempt", type=int,
        help="attempt number of this trial (tag tvrl.attempt; default: 1, or one more than the attempt being resumed)",
    )
    sweep.add_argument(
        "--label", action="append", default=[], metavar="AXIS=PRESET",
        help="name an axis's preset in the run's params (policy, sampler, reward, credit) instead of detecting it",
    )
    sweep.add_argument(
        "--tag", action="append", default=[], metavar="NAME=VALUE",
        help="an extra tag of the run (the Slurm executor tags its job: tvrl.slurm_job_id=123)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_main("tvrl-train", build_parser(), _train, argv, keep_uri=True)


def _check_flags(args: argparse.Namespace) -> None:
    if args.threads < 1:
        raise UserError(f"--threads {args.threads}: give 1 or more torch threads")
    if args.steps is not None and args.steps < 0:
        raise UserError(f"--steps {args.steps}: give 0 (evaluate only) or more optimizer steps")
    if args.attempt is not None and args.attempt < 1:
        raise UserError(f"--attempt {args.attempt}: attempts count from 1")
    check_out_folder(args.out, "the checkpoints")
    for label in args.label:
        if "=" not in label or not label.split("=", 1)[0] or not label.split("=", 1)[1]:
            raise UserError(f"--label {label!r}: write AXIS=PRESET, e.g. --label sampler=sage")
    for tag in args.tag:
        if "=" not in tag or not tag.split("=", 1)[0]:
            raise UserError(f"--tag {tag!r}: write NAME=VALUE, e.g. --tag tvrl.slurm_job_id=123")


def _train(args: argparse.Namespace) -> int:
    _check_flags(args)
    from tvrl_bench.tracking.store import check_store

    check_store(args.tracking_uri)  # seconds, not minutes, when the store cannot be used
    from tvrl_bench.training.loop import StopRequested, TrialFailed
    from tvrl_bench.training.trial.run import TrialOptions, run_trial

    set_torch_threads(args.threads)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    bindings = list(args.gin_bindings)
    if args.steps is not None:
        bindings.append(f"training.trial.steps = {args.steps}")
    if args.seed is not None:
        bindings.append(f"training.trial.seed = {args.seed}")
    options = TrialOptions(
        tracking_uri=args.tracking_uri,
        experiment=args.experiment,
        out_dir=args.out,
        study=args.study,
        parent_run_id=args.parent_run_id,
        attempt=args.attempt,
        labels=dict(label.split("=", 1) for label in args.label),
        tags=dict(tag.split("=", 1) for tag in args.tag),
        progress=not args.no_progress,
        cpu=args.cpu,
    )
    try:
        result = run_trial(args.configs, bindings, options)
    except TrialFailed as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
        print(f"tvrl-train: trial failed: {exc} (run marked FAILED, checkpoint kept)", file=sys.stderr)
        return 1
    except StopRequested as exc:
        print(f"tvrl-train: {exc}; the run is marked KILLED, rerun the same command to resume", file=sys.stderr)
        return INTERRUPTED
    if result.run_id is not None:  # the main process reports; other ranks only train
        named = {**{f"eval/{k}": v for k, v in result.metrics.items() if "/" not in k},
                 **{f"wide_eval/{k}": v for k, v in result.wide_metrics.items() if "/" not in k}}
        print(f"run {result.run_id} {result.status}: " + " ".join(f"{k}={v:.4f}" for k, v in named.items()))
        if diverged := [k for k, v in named.items() if math.isnan(v)]:
            print(f"tvrl-train: warning: {', '.join(diverged)} {'is' if len(diverged) == 1 else 'are'} NaN: the "
                  "final policy diverged, and the tables leave this run out of those cells", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
