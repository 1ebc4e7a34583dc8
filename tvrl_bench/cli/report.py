"""`tvrl-report`: regenerate a study's tables (md, tex, csv, html) and plots from MLflow."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from tvrl_bench.cli.common import add_tracking_uri, run_main
from tvrl_bench.cli.errors import USAGE, add_debug_flag

FORMATS = "md,tex,csv,html"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvrl-report",
        description="Regenerate every results table of a study from its MLflow runs: "
        "reports/<study>/<table>.{md,tex,csv,html} plus plots, also logged to the study's parent run.",
    )
    parser.add_argument("--study", required=True, help="study name (= the MLflow experiment name)")
    add_tracking_uri(parser)
    parser.add_argument("--out", default="reports", help="output folder; tables go to OUT/<study>/ (default: reports)")
    parser.add_argument("--format", default=FORMATS, help=f"comma-separated formats (default: {FORMATS})")
    parser.add_argument(
        "--tables",
        default=None,
        help="comma-separated table names or .toml paths (default: the parent run's tvrl.tables tag, "
        "else every table in reports/tables/ the runs can fill)",
    )
    parser.add_argument("--table-dir", action="append", default=None, metavar="DIR",
                        help="also look for table definitions (<name>.toml) in DIR (first match wins)")
    parser.add_argument("--judgments", default=None,
                        help="SQLite file of win-rate judgments (default: OUT/judgments.sqlite)")
    parser.add_argument("--import-judgments", action="append", default=[], metavar="CSV",
                        help="import judgments from a CSV file into the judgments file first (repeatable)")
    parser.add_argument("--no-plots", action="store_true", help="skip the training-curve and heatmap plots")
    parser.add_argument("--no-log", action="store_true", help="do not log the files to the study's parent run")
    parser.add_argument("--no-page", action="store_true",
                        help="do not write the study page OUT/<study>/index.html (and its page_*.csv files)")
    parser.add_argument("--max-curve-runs", type=int, default=10,
                        help="runs per cell read for training curves (lowest seeds first; default 10)")
    add_debug_flag(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_main("tvrl-report", build_parser(), _report, argv)


def _report(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, format="tvrl-report: %(levelname)s: %(message)s")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # heatmap downloads, quietly
    from pathlib import Path

    from tvrl_bench.report.pipeline import JUDGMENTS_FILE, regenerate
    from tvrl_bench.report.errors import ReportError

    judgments = Path(args.judgments) if args.judgments else Path(args.out) / JUDGMENTS_FILE
    try:
        if args.import_judgments:
            from tvrl_bench.report.winrate.judgments import JudgmentStore

            with JudgmentStore(judgments) as store:
                for csv_path in args.import_judgments:
                    count = store.import_csv(csv_path, study=args.study)
                    print(f"imported {count} judgments from {csv_path} into {judgments}")
        summary = regenerate(
            args.study,
            tracking_uri=args.tracking_uri,
            out_dir=args.out,
            tables=args.tables,
            formats=args.format,
            plots=not args.no_plots,
            log_to_mlflow=not args.no_log,
            judgments=judgments,
            table_dirs=args.table_dir,
            max_curve_runs=args.max_curve_runs,
            page=not args.no_page,
        )
    except (ReportError, ValueError) as exc:
        print(f"tvrl-report: error: {exc}", file=sys.stderr)
        return USAGE
    print(format_summary(summary))
    done = "the tables are written" if summary["tables"] else "no table was written either (see above)"
    failure = page_failure(summary.get("page"), done, args.debug)
    if failure is not None:
        print(f"tvrl-report: error: {failure[0]}", file=sys.stderr)
        return failure[1]
    return 0


def page_failure(page: dict | None, done: str, debug: bool = False) -> tuple[str, int] | None:
    """(one line, exit code) for a study page that could not be written, or None: the reason as a command states
    an error (exit 2 for a file that cannot be written, 1 for a bug), what is `done` all the same, and the command
    that writes the page once the cause is fixed. `debug` prints the page's traceback first."""
    if not page or "error" not in page:
        return None
    from tvrl_bench.cli.errors import explain

    if debug:
        import traceback

        traceback.print_exception(page["error"])
    message, code = explain(page["error"])
    return f"study page not written: {message}; {done}; once that is fixed, write it with: {page['rewrite']}", code


def format_summary(summary: dict) -> str:
    runs = summary["runs"]
    lines = [f"study '{summary['study']}': {runs['finished']} finished trial runs ({summary['tracking_uri']})"]
    if runs["excluded"]:
        listed = ", ".join(f"{status} {n}" for status, n in runs["excluded"].items())
        lines.append(f"  excluded (not FINISHED): {listed}")
    if runs["superseded"]:
        lines.append(f"  superseded attempts: {runs['superseded']}")
    for name, table in summary["tables"].items():
        lines.append(f"  {name}: {', '.join(table['files'])}")
        lines += [f"    warning: {w}" for w in table["warnings"]]
    for name, reason in summary["skipped"].items():
        lines.append(f"  {name}: skipped ({reason})")
    from tvrl_bench.report.study_page import page_lines

    lines += page_lines(summary.get("page"))
    if summary["logged"]:
        lines.append(f"  logged to parent run {summary['parent_run_id']} under reports/")
    elif summary["parent_run_id"] is None and summary["files"]:
        lines.append("  no parent run (tag tvrl.role=study) found: files not logged to MLflow")
    lines.append(f"  done in {summary['seconds']:.2f} s")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
