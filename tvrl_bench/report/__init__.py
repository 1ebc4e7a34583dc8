"""tvrl-report: regenerate a study's tables from MLflow; win-rate studies; plots; the study page.

    from tvrl_bench.report import regenerate
    summary = regenerate("samplers", tracking_uri="sqlite:///mlflow.db", out_dir="reports")

Importing this package imports nothing heavy; `regenerate` imports pandas and MLflow when it is called. Its rooms:

    pipeline.py   `regenerate`: every table of a study, its plots and page, written together and logged
    runs/         reading a study from its store: runs, metric histories, trial artifacts
    tables/       table definitions (reports/tables/*.toml) and the TableResult built from the runs
    stats/        intervals over seeds, paired deltas, win-rate intervals, probability of improvement and IQM
    winrate/      pairwise judgments: pairing samples, the judgments file, the win-rate table
    render/       a TableResult as Markdown, LaTeX, HTML and CSV; the plots beside it
    study_page/   reports/<study>/index.html, the page a researcher opens
    files.py      a report's files written together or not at all      errors.py  ReportError
"""

from __future__ import annotations

from typing import Any


def regenerate(study: str, tracking_uri: str | None = None, out_dir: Any = "reports", tables: Any = None,
               formats: Any = ("md", "tex", "csv", "html"), **options: Any) -> dict[str, Any]:
    """Regenerate the tables of `study`; see `tvrl_bench.report.pipeline.regenerate` for options and the result."""
    from tvrl_bench.report.pipeline import regenerate as _regenerate

    return _regenerate(study, tracking_uri, out_dir, tables, formats, **options)
