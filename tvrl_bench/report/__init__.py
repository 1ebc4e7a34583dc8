"""tvrl-report: regenerate a study's tables from MLflow; win-rate studies; plots.

Importing this package registers the pairwise judges (`judges.evaluator`, `judges.vlm`) and nothing heavy;
`regenerate` imports pandas and MLflow when it is called.

    from tvrl_bench.report import regenerate
    summary = regenerate("samplers", tracking_uri="sqlite:///mlflow.db", out_dir="reports")
"""

from __future__ import annotations

from typing import Any



def regenerate(study: str, tracking_uri: str | None = None, out_dir: Any = "reports", tables: Any = None,
               formats: Any = ("md", "tex", "csv", "html"), **options: Any) -> dict[str, Any]:
    """Regenerate the tables of `study`; see `tvrl_bench.report.pipeline.regenerate` for options and the result."""
    from tvrl_bench.report.pipeline import regenerate as _regenerate

    return _regenerate(study, tracking_uri, out_dir, tables, formats, **options)
