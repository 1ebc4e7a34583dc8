"""A study's view in MLflow's UI: a saved runs view on its experiment, and the links that open it.

MLflow 3.17's UI does not choose an experiment's page from the experiment: the GenAI / Model training switch comes
from the URL parameter `workflowType` (`genai` or `machine_learning`), else from the browser's last choice
(localStorage `mlflow.workflowType`), else GenAI, whose experiment page opens on a traces overview. The runs table
nests child runs under their collapsed parent while it is sorted by start time (its default); sorted by a metric it
lists every run flat. Columns, sort order and which runs the charts draw are UI state: a saved view holds them, an
experiment tag `mlflow.sharedViewState.<key>` whose value is `{"name", "createdAt", "updatedAt", "state"}` with
`state` the view's JSON, and `viewStateShareKey=<key>` in the URL opens it (`compareRunsMode=CHART` on the chart
view).

The study's view, `tvrl: trials`, lists every run flat, best `eval/overall` first, with the columns a table's
deltas are made of: `method`, the study's axes, `seed`, `eval/overall`, `eval/critic_reward` and the last
`train/reward_mean`; its chart view draws every run's training and evaluation curves.
"""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

VIEW_KEY = "tvrl"
VIEW_NAME = "tvrl: trials"
VIEW_TAG_PREFIX = "mlflow.sharedViewState."
METRIC_COLUMNS = ("eval/overall", "eval/critic_reward", "train/reward_mean")
SORT_METRIC = "eval/overall"
METRIC_WIDTH = 170  # pixels
DEFAULT_UI = "http://127.0.0.1:5000"  # where `mlflow ui` serves by default


def view_state(axes: list[str]) -> dict[str, Any]:
    """The view's UI state: runs flat and sorted by `eval/overall`, the delta's columns first, every run charted."""
    params = ["method", *[a for a in axes if a not in ("method", "seed")], "seed"]
    columns = [_column("params", p) for p in params] + [_column("metrics", m) for m in METRIC_COLUMNS]
    return {
        # search facets: a metric sort is what lists child runs flat instead of under their collapsed parent
        "searchFilter": "",
        "orderByKey": _column("metrics", SORT_METRIC),
        "orderByAsc": False,
        "startTime": "ALL",
        "lifecycleFilter": "Active",
        "datasetsFilter": [],
        "modelVersionFilter": "All Runs",
        # table and charts
        "selectedColumns": columns,
        "columnOrder": columns,
        "columnWidths": {_column("metrics", m): METRIC_WIDTH for m in METRIC_COLUMNS},  # room for all digits
        "runsHiddenMode": "SHOW_ALL",  # the default charts only the first 10 runs
        "hideEmptyCharts": True,
        "useGroupedValuesInCharts": True,
    }


def save_study_view(client: Any, experiment_id: str, axes: list[str]) -> None:
    """Write (or rewrite) the study's saved view on its experiment."""
    now = int(time.time() * 1000)
    envelope = {"name": VIEW_NAME, "createdAt": now, "updatedAt": now, "state": json.dumps(view_state(axes))}
    client.set_experiment_tag(experiment_id, VIEW_TAG_PREFIX + VIEW_KEY, json.dumps(envelope))


@dataclass(frozen=True)
class StudyLinks:
    """Where to look at a study: its runs table and chart view, and the command that serves them (None when the
    tracking URI is itself the UI's server)."""

    runs: str
    charts: str
    serve: str | None

    def lines(self) -> list[str]:
        where = f"after `{self.serve}`" if self.serve else "on the tracking server"
        return [f"MLflow UI ({where}):", f"  runs   {self.runs}", f"  charts {self.charts}"]


def study_links(tracking_uri: str, experiment_id: str) -> StudyLinks | None:
    """The study's links for `tracking_uri`: on an http(s) tracking server its own address; for a database or a
    folder, `mlflow ui` on it at its default address. None for a Databricks workspace (its UI has its own links)."""
    if tracking_uri.startswith("databricks"):
        return None
    if tracking_uri.startswith(("http://", "https://")):
        origin, serve = tracking_uri.rstrip("/"), None
    else:
        origin, serve = DEFAULT_UI, f"mlflow ui --backend-store-uri {shlex.quote(tracking_uri)}"
    query = {"workflowType": "machine_learning", "viewStateShareKey": VIEW_KEY}
    runs = f"{origin}/#/experiments/{experiment_id}/runs?{urlencode(query)}"
    charts = f"{origin}/#/experiments/{experiment_id}/runs?{urlencode({**query, 'compareRunsMode': 'CHART'})}"
    return StudyLinks(runs, charts, serve)


def _column(group: str, key: str) -> str:
    return f"{group}.`{key}`"
