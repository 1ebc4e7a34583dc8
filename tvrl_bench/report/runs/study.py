"""Reading a study's runs from MLflow into pandas: one search, finished trials kept, the others counted.

The contract is docs/report.md: experiment = study name, one parent run (tag `tvrl.role=study`), one child run per
trial with params `policy`, `sampler`, `reward`, `credit`, `method`, `seed` and metrics `eval/...`. A run logged
by hand with the same param and metric names (no tags, no parent) counts as a trial too.

Only FINISHED runs enter the tables; runs in any other state (RUNNING, FAILED, KILLED, SCHEDULED) are counted and
reported, and those of trials that never finished (`unfinished`) give the tables their rows and cells marked as
failed or missing, so a trial that failed is never silently absent. When a trial was retried (same
`tvrl.trial_key`) and more than one attempt finished, the latest attempt is kept and the earlier ones are counted
as superseded. Reading the runs frame itself is runs/frames.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tvrl_bench import registry
from tvrl_bench.report.errors import ReportError
from tvrl_bench.report.runs.frames import RUN_COLUMNS, runs_frame, search_all_runs, sql_runs_frame
from tvrl_bench.report.runs.one_config import check_one_config, check_one_profile

ROLE_TAG = "tvrl.role"
STUDY_TAG = "tvrl.study"
TRIAL_KEY_TAG = "tvrl.trial_key"
ATTEMPT_TAG = "tvrl.attempt"
TABLES_TAG = "tvrl.tables"
PARENT_TAG = "mlflow.parentRunId"
FINISHED = "FINISHED"


def resolve_tracking_uri(tracking_uri: str | None) -> str:
    """The tracking URI to read: the argument, else $MLFLOW_TRACKING_URI, else `sqlite:///mlflow.db`.

    A SQLite URI whose file does not exist is an error (MLflow would silently create an empty database).
    """
    from tvrl_bench.tracking.store import TrackingError, check_store, resolve_uri

    uri = resolve_uri(tracking_uri)
    if uri.startswith("sqlite:///"):
        path = uri[len("sqlite:///") :]
        if path and path != ":memory:" and not Path(path).exists():
            raise ReportError(
                f"no MLflow database at '{Path(path).resolve()}' (tracking URI {uri}); pass --tracking-uri "
                "(for example sqlite:///path/to/mlflow.db or http://host:5000) or run from the folder that holds "
                "mlflow.db"
            )
    try:
        check_store(uri, write=False)  # not a database, or a server that does not answer: seconds, one line
    except TrackingError as exc:
        raise ReportError(str(exc)) from None
    return uri


def make_client(tracking_uri: str | None = None) -> Any:
    """An `mlflow.MlflowClient` for `resolve_tracking_uri(tracking_uri)`."""
    from tvrl_bench.tracking.store import client_for

    return client_for(resolve_tracking_uri(tracking_uri))


@dataclass
class StudyRuns:
    """The runs of one study, as frames with columns run_id, run_name, status, start_time, end_time,
    `params.<name>` (strings), `metrics.<name>` (latest value, float) and `tags.<name>`.

    trials: the FINISHED trial runs that enter tables (one per trial key); excluded: trial runs in other states;
    superseded: finished earlier attempts of a trial that finished again; parent: the study's parent run
    ({"run_id", "run_name", "tags"}) or None.
    """

    study: str
    experiment_id: str
    tracking_uri: str
    trials: pd.DataFrame
    excluded: pd.DataFrame
    superseded: pd.DataFrame
    parent: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    # trial runs not FINISHED whose trial never finished (all columns; no earlier attempts of finished trials)
    unfinished: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(RUN_COLUMNS)))

    @property
    def excluded_counts(self) -> dict[str, int]:
        """{status: number of trial runs} for the runs left out because they did not finish."""
        if self.excluded.empty:
            return {}
        return {str(k): int(v) for k, v in self.excluded["status"].value_counts().sort_index().items()}

    def has_param(self, name: str) -> bool:
        """True when at least one finished trial has param `name`."""
        column = f"params.{name}"
        return column in self.trials.columns and bool(self.trials[column].notna().any())

    def metric_names(self) -> list[str]:
        return sorted(c[len("metrics.") :] for c in self.trials.columns if c.startswith("metrics."))

    def status_note(self) -> str | None:
        """One sentence on the trials left out because they never finished (None when every trial finished).

        Interrupted or failed attempts of a trial that later finished are not mentioned: a resumed study's
        tables read exactly like an uninterrupted one's (`excluded_counts` still counts them)."""
        parts = []
        counts = ({} if self.unfinished.empty else
                  {str(k): int(v) for k, v in self.unfinished["status"].value_counts().sort_index().items()})
        if counts:
            total = sum(counts.values())
            listed = ", ".join(f"{status} {count}" for status, count in counts.items())
            parts.append(f"{total} trial run{'s' if total != 1 else ''} not FINISHED and left out ({listed})")
        if len(self.superseded):
            k = len(self.superseded)
            parts.append(f"{k} earlier finished attempt{'s' if k != 1 else ''} of retried trials superseded")
        if not parts:
            return None
        return "Excluded: " + "; ".join(parts) + "."

    def tables_tag(self) -> list[str] | None:
        """The table names in the parent run's `tvrl.tables` tag, or None when it is absent."""
        if not self.parent:
            return None
        value = self.parent["tags"].get(TABLES_TAG)
        if value is None or not value.strip():
            return None
        return [name.strip() for name in value.split(",") if name.strip()]


def load_study_runs(study: str, tracking_uri: str | None = None, client: Any = None) -> StudyRuns:
    """Every run of the MLflow experiment `study`, split into finished trials, excluded runs and the parent.

    On a SQL tracking store (SQLite, PostgreSQL, MySQL) the runs are read with four plain SELECTs on MLflow's
    own tables (`runs`, `params`, `latest_metrics`, `tags`): the rows `search_runs` returns, without building one
    ORM object per param, metric and tag (about 12 times faster at 1,000 runs). Any other store, or any error on
    that path, falls back to paged `client.search_runs` calls. Both give the same frame (tested).
    """
    uri = tracking_uri if client is not None else resolve_tracking_uri(tracking_uri)
    client = client or make_client(uri)
    uri = uri or client.tracking_uri
    experiment = client.get_experiment_by_name(study)
    if experiment is None:
        names = [e.name for e in client.search_experiments()]
        listed = ", ".join(sorted(names)) or "none"
        raise ReportError(
            f"no MLflow experiment named '{study}' at {uri}{registry.suggest(study, names)} "
            f"(experiments there: {listed}). The experiment name is the study name."
        )
    from tvrl_bench.tracking.store import patiently

    frame = patiently(uri, lambda: sql_runs_frame(client, experiment.experiment_id))
    if frame is None:
        frame = runs_frame(search_all_runs(client, experiment.experiment_id))
    runs = split_runs(frame, study=study, experiment_id=experiment.experiment_id, tracking_uri=uri)
    check_one_profile(study, runs.trials)
    check_one_config(study, runs.trials)
    return runs


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name in frame.columns:
        return frame[name]
    return pd.Series([None] * len(frame), index=frame.index, dtype=object)


def split_runs(frame: pd.DataFrame, study: str, experiment_id: str = "", tracking_uri: str = "") -> StudyRuns:
    """Split a runs frame (see frames.py: RUN_COLUMNS, params.<k>, metrics.<k>, tags.<k>) into the parent run,
    finished trials (deduplicated by trial key) and excluded runs."""
    role = _column(frame, f"tags.{ROLE_TAG}")
    parent_ids = set(_column(frame, f"tags.{PARENT_TAG}").dropna())
    is_parent = (role == "study") | frame["run_id"].isin(parent_ids)
    parent = _pick_parent(frame[is_parent], study)
    # A run with another role (a report or judging run someone logged here) is not a trial.
    is_trial = ~is_parent & (role.isna() | (role == "trial"))
    trials = frame[is_trial]
    finished = trials[trials["status"] == FINISHED]
    excluded = trials[trials["status"] != FINISHED][["run_id", "run_name", "status"]].reset_index(drop=True)
    kept, superseded = _latest_attempts(finished)
    unfinished = trials[trials["status"] != FINISHED]
    keys = _column(unfinished, f"tags.{TRIAL_KEY_TAG}")
    finished_keys = set(_column(finished, f"tags.{TRIAL_KEY_TAG}").dropna())
    unfinished = unfinished[keys.isna() | ~keys.isin(finished_keys)]
    notes = []
    if len(kept) and "params.seed" not in kept.columns:
        notes.append("no run has a 'seed' param: every run counts as its own seed")
    elif len(kept) and kept["params.seed"].isna().any():
        k = int(kept["params.seed"].isna().sum())
        notes.append(f"{k} finished run{'s' if k != 1 else ''} without a 'seed' param count as their own seed")
    return StudyRuns(
        study=study,
        experiment_id=experiment_id,
        tracking_uri=tracking_uri,
        trials=kept.reset_index(drop=True),
        excluded=excluded,
        superseded=superseded.reset_index(drop=True),
        parent=parent,
        notes=notes,
        unfinished=unfinished.reset_index(drop=True),
    )


def _pick_parent(parents: pd.DataFrame, study: str) -> dict[str, Any] | None:
    if parents.empty:
        return None
    named = parents[parents["run_name"] == study]
    chosen = (named if len(named) else parents).sort_values("start_time").iloc[-1]
    tags = {c[len("tags.") :]: v for c, v in chosen.items() if c.startswith("tags.") and isinstance(v, str)}
    return {"run_id": chosen["run_id"], "run_name": chosen["run_name"], "tags": tags}


def _latest_attempts(finished: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    key = _column(finished, f"tags.{TRIAL_KEY_TAG}")
    if key.isna().all():
        return finished, finished.iloc[:0]
    attempt = pd.to_numeric(_column(finished, f"tags.{ATTEMPT_TAG}"), errors="coerce").fillna(-1)
    order = finished.assign(_key=key, _attempt=attempt).sort_values(["_attempt", "end_time"], na_position="first")
    keyed = order[order["_key"].notna()]
    latest = keyed.drop_duplicates("_key", keep="last")
    superseded = keyed.drop(index=latest.index)
    kept = finished.loc[finished.index.isin(latest.index) | key.isna()]
    return kept, finished.loc[superseded.index]
