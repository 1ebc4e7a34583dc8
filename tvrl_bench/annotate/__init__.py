"""Blind pairwise studies in the browser: `tvrl-bench annotate`.

People compare the final samples of two methods of a study, side by side, without knowing which is which. Each
vote is stored as a `tvrl_bench.report.winrate.judgments.Judgment` (judge "human:<annotator>") in the judgments SQLite
file that `tvrl-report` reads for its win-rate table.

Modules: `pairs` (the blinded pair list built from the study's MLflow runs), `annotators` (annotator names and the
secret tokens of their links), `store` (SQLite: sessions, annotators, per-annotator order and sides; votes as judgments),
`session` (one study's pairs and the annotators' progress, independent of HTTP), `page` (the HTML/JS page),
`server` (FastAPI routes and binding rules). Importing this package imports neither FastAPI nor MLflow.
"""

from __future__ import annotations


class AnnotateError(ValueError):
    """A request or a command the annotation tool cannot honour; `status` is the HTTP status it maps to."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status
