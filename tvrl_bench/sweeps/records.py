"""A study's finished runs as a file in the repository, so a later stage (or a table) can be run on a machine
whose MLflow store never held them (a store such as mlflow.db is not in git).

`save_record` writes one JSON line for the study (its parent run's `tvrl.*` tags that the sweep, the report and the
study page read: profile, staged design, tables; and, under `critic_card`, the critic card `tvrl-bench critic-card
--study` logged on the parent run, when it logged one: `{"columns": [name, ...], "rows": [[value, ...], ...]}`, the
CSV's header and rows as its strings, record_cards.py) and one per finished trial run: its trial key, run name,
`tvrl.*` tags, params, final metrics (`metrics: {name: [value, step]}`, each metric's last value and step) and the
curves of its evaluations during training (`history: {name: [[step, value], ...]}`, every point of each `eval/*`
metric the run logged at two steps or more, in step order; the last point is the final value). `load_record` checks
the whole record first (record_check.py: every line's types, one profile, one configuration per arm and seed, and
against the study in the store) and writes nothing when any of it is wrong; then it logs every recorded trial whose
key has no finished run there: a FINISHED child run of the study's parent with the same params, tags, curves and
final metrics, tagged `tvrl.imported_from`; and the record's critic card as the parent run's `critic_card.csv` when
the parent holds no card (a card measured in this store, or loaded before, wins). A curve is logged point by point
(timestamps of the load, increasing along it) and its final value is not logged again, so the store's
`get_metric_history` is the original run's steps and values and its latest value is the recorded final one. A line
without `history` (a record saved before records kept curves; still format 1) loads its final values only, and a
header without `critic_card` logs no card. A run it cannot finish logging is deleted, and the parent run ends as it
was (FINISHED when the load made it), so a load never leaves a run RUNNING; unfinished imported runs an older load
left behind are deleted by the next one. The sweep then skips those trials and the report reads them.
Videos, checkpoints and the `train/*` curves are not recorded.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tvrl_bench.sweeps.record_cards import log_card, saved_card
from tvrl_bench.sweeps.record_check import (CARD_KEY, FORMAT, PARENT_TAGS, RecordError, check_joins, check_record,
                                            read_record)
from tvrl_bench.sweeps.state import StudyTracker

IMPORTED_TAG = "tvrl.imported_from"
CURVES = "eval/"  # the metrics whose history a record keeps: the evaluations during training (a few points a run)
__all__ = ["IMPORTED_TAG", "RecordError", "load_record", "read_record", "save_record"]


def save_record(tracking_uri: str, study: str, path: Path) -> int:
    """Write the study's finished trial runs (and its critic card) to `path`; returns how many runs."""
    tracker = StudyTracker.find(tracking_uri, study)
    if tracker is None:
        raise RecordError(f"the store {tracking_uri} holds no study {study!r}: run it first (tvrl-sweep), or name the "
                          "store that holds it with --tracking-uri")
    parent = tracker.client.get_run(tracker.parent_run_id)
    card = saved_card(tracker.client, study, tracker.parent_run_id)
    lines = [{"format": FORMAT, "study": study,
              "parent_tags": {k: v for k, v in parent.data.tags.items() if k in PARENT_TAGS},
              **({CARD_KEY: card} if card is not None else {})}]
    runs = tracker.runs()
    for key in sorted(runs.by_key):
        run = runs.latest_finished(key)
        if run is None:
            continue
        metrics, curves = {}, {}
        for name in run.data.metrics:
            history = tracker.client.get_metric_history(run.info.run_id, name)
            history = sorted(history, key=lambda m: (m.step, m.timestamp))
            metrics[name] = [history[-1].value, history[-1].step]
            if name.startswith(CURVES) and len(history) > 1:  # one point is the final value already
                curves[name] = [[m.step, m.value] for m in history]
        tags = {k: v for k, v in run.data.tags.items() if k.startswith("tvrl.") and k != "tvrl.resumed_from"}
        lines.append({"key": key, "run_name": run.info.run_name, "tags": tags, "params": dict(run.data.params),
                      "metrics": metrics, **({"history": curves} if curves else {})})
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
        if CARD_KEY in header:
            log_card(client, tracker.parent_run_id, header[CARD_KEY])
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
    from mlflow.entities import Param

    tags = {**trial.get("tags", {}), "tvrl.trial_key": trial["key"], "tvrl.role": "trial", "tvrl.study": study,
            "mlflow.parentRunId": tracker.parent_run_id, IMPORTED_TAG: str(path)}
    run_id = client.create_run(tracker.experiment_id, run_name=trial.get("run_name"), tags=tags).info.run_id
    try:
        params = [Param(k, str(v)) for k, v in trial["params"].items()]
        metrics = _metrics(trial)
        for i in range(0, max(len(params), len(metrics)), 100):
            client.log_batch(run_id, metrics=metrics[i:i + 100], params=params[i:i + 100])
        client.set_terminated(run_id, "FINISHED")
    except BaseException:
        client.delete_run(run_id)  # never a half-logged run: the trial is not there, and a rerun imports it
        raise


def _metrics(trial: dict) -> list:
    """The trial's metrics as MLflow Metrics: every point of each recorded curve (timestamps now + its index, so the
    last point, the final value, is the latest), then the final value of each metric without a curve."""
    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    curves = trial.get("history", {})
    metrics = [Metric(name, float(v), now + i, int(s)) for name, points in curves.items()
               for i, (s, v) in enumerate(points)]
    return metrics + [Metric(k, float(v), 0, int(s)) for k, (v, s) in trial["metrics"].items() if k not in curves]


def _delete_unfinished_imports(client, runs) -> None:
    """Delete imported runs that never finished (an older load stopped while logging them): not a trial's run."""
    for attempts in runs.by_key.values():
        for run in attempts:
            if IMPORTED_TAG in run.data.tags and run.info.status != "FINISHED":
                client.delete_run(run.info.run_id)
