"""`regenerate`: every table of a study from MLflow, written to reports/<study>/ and logged to the parent run.

This is what `tvrl-report` runs and what the sweep engine calls at the end of a study.
"""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path
from typing import Any

import pandas as pd

from tvrl_bench.report.files import check_writable
from tvrl_bench.report.render.formats import FORMATS, check_formats, write_table
from tvrl_bench.report.render.plots import plot_curves, plot_heatmaps
from tvrl_bench.report.runs.histories import HistoryCache
from tvrl_bench.report.runs.study import StudyRuns, load_study_runs, make_client, resolve_tracking_uri
from tvrl_bench.report.tables.definition_types import MetricTable, TableDefinition, WinrateTable
from tvrl_bench.report.tables.definitions import available_tables, load_table, parse_table_file
from tvrl_bench.report.tables.metric_table import build_metric_table
from tvrl_bench.report.tables.table_result import TableResult

log = logging.getLogger(__name__)

JUDGMENTS_FILE = "judgments.sqlite"
ARTIFACT_DIR = "reports"


def regenerate(
    study: str,
    tracking_uri: str | None = None,
    out_dir: str | Path = "reports",
    tables: str | list[str] | tuple[str, ...] | None = None,
    formats: str | list[str] | tuple[str, ...] = FORMATS,
    *,
    plots: bool = True,
    log_to_mlflow: bool = True,
    judgments: str | Path | None = None,
    table_dirs: list[str | Path] | None = None,
    max_curve_runs: int = 10,
    client: Any = None,
    page: bool = True,
) -> dict[str, Any]:
    """Regenerate the tables of `study` and return what was done.

    Which tables: `tables` (names or "a,b"); else the parent run's tag `tvrl.tables`; else every table found in
    `reports/tables/` (see tables/definitions.py `table_dirs`) whose params the runs have (and `winrate` when the
    study has judgments); the others are skipped with a note. Files: `<out_dir>/<study>/<table>.<fmt>` per format, plus
    `<table>.curves.png` / `<table>.heatmaps.png` when `plots` and the definition asks for them; all are
    also logged to the study's parent run under `reports/` when `log_to_mlflow` and a parent run exists.
    Judgments for win-rate tables are read from `judgments` (default `<out_dir>/judgments.sqlite`).
    When `page` and the study has finished trials, the study page `<out_dir>/<study>/index.html` and its CSV files
    are written too (report/study_page/), all together or none, and logged with the tables. A table's files are
    written together too; a folder that cannot be written raises NotWritten (a ReportError) before any is.

    Returns {"study", "tracking_uri", "out_dir" (the study folder), "tables": {name: {"files": [paths],
    "warnings": [...], "title"}}, "skipped": {name: reason}, "files": [every path written], "runs":
    {"finished", "excluded" ({status: count}), "superseded"}, "parent_run_id", "logged" (bool), "seconds",
    "page": {"path", "files", "flags" (a line per method flagged for reward hacking), "source", "seconds"} (or
    {"error": the exception, "rewrite": the tvrl-report command that writes it, "files": [], "flags": []} when it
    could not be written, every earlier page file left as it was; None without `page` or trials)}.
    """
    start = time.perf_counter()
    formats = check_formats(formats)
    uri = resolve_tracking_uri(tracking_uri) if client is None else (tracking_uri or client.tracking_uri)
    client = client or make_client(uri)
    runs = load_study_runs(study, uri, client=client)
    folder = Path(out_dir) / _safe(study)
    check_writable(folder)  # before any table is built
    judgments_path = Path(judgments) if judgments is not None else Path(out_dir) / JUDGMENTS_FILE
    judged = _read_judgments(judgments_path, study)
    selected, explicit = _select(tables, runs, judged, table_dirs)
    summary: dict[str, Any] = {
        "study": study,
        "tracking_uri": uri,
        "out_dir": str(folder),
        "tables": {},
        "skipped": {},
        "files": [],
        "runs": {
            "finished": len(runs.trials),
            "excluded": runs.excluded_counts,
            "superseded": len(runs.superseded),
        },
        "parent_run_id": runs.parent["run_id"] if runs.parent else None,
        "logged": False,
        "page": None,
    }
    if status := runs.status_note():
        log.warning("study '%s': %s", study, status)
    cache = HistoryCache(client)
    from tvrl_bench.report.runs.artifacts import ArtifactReader

    records = ArtifactReader(client)  # per-video scores, for one-seed paired deltas over prompts
    built: list[TableResult] = []
    try:
        for defn in selected:
            reason = _not_applicable(defn, runs, judged)
            if reason:
                summary["skipped"][defn.name] = reason
                (log.warning if explicit else log.info)("table '%s' skipped: %s", defn.name, reason)
                continue
            result = _build(defn, runs, judged, cache, records.prompt_scores)
            built.append(result)
            if not explicit and not result.has_data():
                summary["skipped"][defn.name] = "no cell has data"
                log.info("table '%s' skipped: no cell has data", defn.name)
                continue
            images = _plots(defn, result, client, cache, folder, max_curve_runs) if plots else []
            files = images + write_table(result, folder, formats, [p.name for p in images])
            summary["tables"][defn.name] = {
                "title": result.title,
                "files": [str(p) for p in files],
                "warnings": list(result.warnings),
            }
            summary["files"] += [str(p) for p in files]
    finally:
        records.close()
    built = [r for r in built if r.name in summary["tables"]]
    if page and not runs.trials.empty:
        summary["page"] = _page(runs, client, cache, built, folder)
        if "error" in summary["page"]:
            summary["page"]["rewrite"] = _rewrite_command(study, uri, out_dir)
        summary["files"] += summary["page"]["files"]
    if log_to_mlflow and runs.parent and summary["files"]:
        summary["logged"] = _log_files(client, runs.parent["run_id"], summary["files"])
    summary["seconds"] = time.perf_counter() - start
    return summary


def _safe(name: str) -> str:
    return re.sub(r"[\\/:]+", "_", name)


def _read_judgments(path: Path, study: str) -> pd.DataFrame:
    from tvrl_bench.report.winrate.judgments import JudgmentStore

    if not path.is_file():
        return pd.DataFrame(columns=["study", "prompt", "seed", "method_a", "method_b", "left", "judge", "verdict"])
    with JudgmentStore(path) as store:
        return store.frame(study)


def _names(tables: str | list[str] | tuple[str, ...]) -> list[str]:
    if isinstance(tables, str):
        tables = tables.split(",")
    return [t.strip() for t in tables if t.strip()]


def _select(
    tables: Any, runs: StudyRuns, judged: pd.DataFrame, table_dirs: list[str | Path] | None
) -> tuple[list[TableDefinition], bool]:
    if tables is not None and _names(tables):
        return [load_table(n, table_dirs) for n in _names(tables)], True
    tagged = runs.tables_tag()
    if tagged:
        return [load_table(n, table_dirs) for n in tagged], True
    available = available_tables(table_dirs)
    return [parse_table_file(p) for p in available.values()], False


def _not_applicable(defn: TableDefinition, runs: StudyRuns, judged: pd.DataFrame) -> str | None:
    if isinstance(defn, WinrateTable):
        return None if len(judged) else f"no judgments for study '{runs.study}'"
    if runs.trials.empty:
        return "the study has no finished trial runs"
    missing = [p for p in defn.required_params() if not runs.has_param(p)]
    if missing:
        return f"no finished run has param{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
    return None


def _build(defn: TableDefinition, runs: StudyRuns, judged: pd.DataFrame,
           cache: HistoryCache | None = None, prompt_scores: Any = None) -> TableResult:
    if isinstance(defn, WinrateTable):
        from tvrl_bench.report.winrate.table import build_winrate_table

        return build_winrate_table(defn, judged, runs.study)
    return build_metric_table(defn, runs, cache, prompt_scores)


def _plots(
    defn: TableDefinition, result: TableResult, client: Any, cache: HistoryCache, folder: Path, max_runs: int
) -> list[Path]:
    if not isinstance(defn, MetricTable):
        return []
    made = []
    if defn.curves:
        path = plot_curves(result, defn.curves, cache, folder / f"{defn.name}.curves.png", max_runs)
        if path:
            made.append(path)
    if defn.heatmaps:
        path = plot_heatmaps(result, client, folder / f"{defn.name}.heatmaps.png")
        if path:
            made.append(path)
    return made


def _page(runs: StudyRuns, client: Any, cache: HistoryCache, tables: list[TableResult],
          folder: Path) -> dict[str, Any]:
    """The study page (report/study_page/); a failure is returned for the command to report, never a lost table."""
    from tvrl_bench.report.study_page import write_study_page

    try:
        return write_study_page(runs, client, folder, tables, cache=cache)
    except Exception as exc:  # the tables are written; the page must not take them down with it
        log.debug("study page of '%s' not written", runs.study, exc_info=True)
        return {"error": exc, "files": [], "flags": []}


def _rewrite_command(study: str, uri: str, out_dir: str | Path) -> str:
    """The tvrl-report command that writes this study's tables and page again."""
    import shlex

    return " ".join(["tvrl-report", "--study", shlex.quote(study), "--tracking-uri", shlex.quote(uri), "--out",
                     shlex.quote(str(out_dir))])


def _log_files(client: Any, run_id: str, files: list[str]) -> bool:
    try:
        for path in files:
            client.log_artifact(run_id, path, ARTIFACT_DIR)
    except Exception as exc:  # the tables are written; failing to attach them must not lose them
        log.warning("could not log the report files to parent run %s: %s", run_id, exc)
        return False
    return True
