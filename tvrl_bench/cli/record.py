"""`tvrl-bench record save STUDY` / `tvrl-bench record load FILE`: a study's finished runs as a file in git.

A staged study decides from every finished run of its stages, and MLflow's store (mlflow.db) is not in git: a
later stage on a new machine would rerun the earlier ones. `save` writes the study's finished trial runs (params,
tags, final metrics and the eval/* curves, and the parent run's profile, staged design, tables and critic card) to
reports/records/STUDY.jsonl; `load` checks the whole file, then logs them into a store (skipping trials it already
has; a bad record writes nothing, one line, exit 2), after which `tvrl-sweep` resumes the study where the record
ends and `tvrl-report` and the study page read them (the gain curves from the recorded eval/* curves, the critic card
logged on the parent run unless it holds one).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tvrl_bench.cli.common import add_tracking_uri
from tvrl_bench.cli.errors import add_debug_flag

RECORDS = Path("reports/records")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "record", help="save a study's finished runs to a file in the repository, or load them into a store",
        description="Save a study's finished trial runs (params, tags, final metrics and the curves of their "
                    "evaluations during training, eval/*) and the study's critic card to a JSON-lines file, or load "
                    "such a file into an MLflow store so a sweep resumes after them and the report and study page "
                    "read them. Videos, checkpoints and train/* curves are not recorded.",
        epilog="Example: tvrl-bench record save samplers; then on another machine: tvrl-bench record load "
               "reports/records/samplers.jsonl && tvrl-sweep sweeps/samplers.gin")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    save = actions.add_parser("save", help="write STUDY's finished runs to reports/records/STUDY.jsonl (or --out)")
    save.add_argument("study", metavar="STUDY", help="the study's name (sweeps.study.name)")
    save.add_argument("--out", metavar="FILE", help="where to write (default: reports/records/STUDY.jsonl)")
    load = actions.add_parser("load", help="check the whole record, then log its trials into the store (those it "
                              "lacks), the study's profile, design and tables, and its critic card where the store has "
                              "none; a bad record writes nothing")
    load.add_argument("file", metavar="FILE", help="a record written by `tvrl-bench record save`")
    for sub in (save, load):
        add_tracking_uri(sub, help="the MLflow store (default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)")
        add_debug_flag(sub)
        sub.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tvrl_bench.cli.errors import UserError
    from tvrl_bench.sweeps.records import RecordError, load_record, read_record, save_record
    from tvrl_bench.tracking.store import resolve_uri, tracking_errors
    from tvrl_bench.tracking.store_checks import check_store

    args.tracking_uri = resolve_uri(args.tracking_uri)
    try:
        if args.action == "save":
            out = Path(args.out) if args.out else RECORDS / f"{args.study}.jsonl"
            check_store(args.tracking_uri, write=False)
            with tracking_errors(args.tracking_uri):
                count = save_record(args.tracking_uri, args.study, out)
            print(f"record save: {count} finished trials of study {args.study} -> {out}")
            return 0
        record = read_record(Path(args.file))  # the whole file checked before the store is touched
        check_store(args.tracking_uri, write=True)
        with tracking_errors(args.tracking_uri):
            study, imported, present = load_record(args.tracking_uri, Path(args.file), record)
        print(f"record load: study {study}: {imported} trials logged to {args.tracking_uri}, {present} already there")
        if "tvrl.tables" not in record[0].get("parent_tags", {}):
            print(f"record load: {args.file} names no tables (saved before records kept them): tvrl-report --study "
                  f"{study} renders every table its runs have params for; pass --tables, or save the record again",
                  file=sys.stderr)
        return 0
    except RecordError as exc:
        raise UserError(str(exc)) from None
