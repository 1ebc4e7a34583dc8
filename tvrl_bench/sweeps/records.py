"""A study's finished runs as a file in the repository, so a later stage (or a table) can be run on a machine
whose MLflow store never held them (a store such as mlflow.db is not in git).

`save_record` writes one JSON line for the study (its parent run's `tvrl.*` tags that the sweep, the report and the
study page read: profile, staged design, tables) and one per finished trial run: its trial key, run name, `tvrl.*`
tags, params and final metrics (each metric's last value and step). `load_record` checks the whole record first
(record_check.py: every line's types, one profile, one configuration per arm and seed, and against the study in the
store) and writes nothing when any of it is wrong; then it logs every recorded trial whose key has no finished run
there: a FINISHED child run of the study's parent with the same params, tags and final metrics, tagged
`tvrl.imported_from`. A run it cannot finish logging is deleted, and the parent run ends as it was (FINISHED when
the load made it), so a load never leaves a run RUNNING; unfinished imported runs an older load left behind are
deleted by the next one. The sweep then skips those trials and the report reads them. Curves, videos and
checkpoints are not recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from tvrl_bench.sweeps.record_check import FORMAT, PARENT_TAGS, RecordError, check_joins, check_record, read_record
from tvrl_bench.sweeps.state import StudyTracker

IMPORTED_TAG = "tvrl.imported_from"
__all__ = ["IMPORTED_TAG", "RecordError", "load_record", "read_record", "save_record"]


def save_record(tracking_uri: str, study: str, path: Path) -> int:
    """Write the study's finished trial runs to `path`; returns how many."""
    tracker = StudyTracker.find(tracking_uri, study)
    if tracker is None:
        raise RecordError(f"the store {tracking_uri} holds no study {study!r}: run it first (tvrl-sweep), or name the "
                          "store that holds it with --tracking-uri")
    parent = tracker.client.get_run(tracker.parent_run_id)
    lines = [{"format": FORMAT, "study": study,
              "parent_tags": {k: v for k, v in parent.data.tags.items() if k in PARENT_TAGS}}]
    runs = tracker.runs()
    for key in sorted(runs.by_key):
        run = runs.latest_finished(key)
        if run is None:
            continue
        metrics = {}
        for name in run.data.metrics:
            history = tracker.client.get_metric_history(run.info.run_id, name)
            last = max(history, key=lambda m: (m.step, m.timestamp))
            metrics[name] = [last.value, last.step]
        tags = {k: v for k, v in run.data.tags.items() if k.startswith("tvrl.") and k != "tvrl.resumed_from"}
        lines.append({"key": key, "run_name": run.info.run_name, "tags": tags, "params": dict(run.data.params),
                      "metrics": metrics})
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.tmp")  # renamed into place: never a half-written record
    partial.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    partial.replace(path)
    return len(lines) - 1


def load_record(tracking_uri: str, path: Path, record: tuple[dict, list[dict]] | None = None) -> tuple[str, int, int]:
    """Log the record's trials that the store lacks (`record`: read_record's, when already read); returns (study,
    imported, already there). RecordError, with nothing written, when any part of it is wrong."""
    header, trials = record or read_record(path)
    profile = check_record(path, header, trials)
    study = header["study"]
    found = StudyTracker.find(tracking_uri, study)
    check_joins(path, trials, profile, found)
    before = found.client.get_run(found.parent_run_id).info.status if found else None
    tracker = StudyTracker.open(tracking_uri, study, [], [], "")
    client = tracker.client
    imported = present = 0
    try:
        tags_now = client.get_run(tracker.parent_run_id).data.tags
        for tag, value in header.get("parent_tags", {}).items():
            if tag not in tags_now:
                client.set_tag(tracker.parent_run_id, tag, value)
        runs = tracker.runs()
        _delete_unfinished_imports(client, runs)
        for trial in trials:
            if runs.finished(trial["key"]):
                present += 1
                continue
            _import(client, tracker, study, trial, path)
            imported += 1
    finally:
        tracker.finish({}, before if before in ("FINISHED", "FAILED", "KILLED") else "FINISHED")
    return study, imported, present


def _import(client, tracker: StudyTracker, study: str, trial: dict, path: Path) -> None:
    """One recorded trial as a FINISHED child run of the study's parent; deleted again if it cannot be finished."""
    from mlflow.entities import Metric, Param

    tags = {**trial.get("tags", {}), "tvrl.trial_key": trial["key"], "tvrl.role": "trial", "tvrl.study": study,
            "mlflow.parentRunId": tracker.parent_run_id, IMPORTED_TAG: str(path)}
    run_id = client.create_run(tracker.experiment_id, run_name=trial.get("run_name"), tags=tags).info.run_id
    try:
        params = [Param(k, str(v)) for k, v in trial["params"].items()]
        metrics = [Metric(k, float(v), 0, int(s)) for k, (v, s) in trial["metrics"].items()]
        for i in range(0, max(len(params), len(metrics)), 100):
            client.log_batch(run_id, metrics=metrics[i:i + 100], params=params[i:i + 100])
        client.set_terminated(run_id, "FINISHED")
    except BaseException:
        client.delete_run(run_id)  # never a half-logged run: the trial is not there, and a rerun imports it
        raise


def _delete_unfinished_imports(client, runs) -> None:
    """Delete imported runs that never finished (an older load stopped while logging them): not a trial's run."""
    for attempts in runs.by_key.values():
        for run in attempts:
            if IMPORTED_TAG in run.data.tags and run.info.status != "FINISHED":
                client.delete_run(run.info.run_id)
