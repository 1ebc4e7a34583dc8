"""A study's finished runs as a file in the repository, so a later stage (or a table) can be run on a machine
whose MLflow store never held them (a store such as mlflow.db is not in git).

`save_record` writes one JSON line for the study (its parent run's `tvrl.*` tags: profile, staged design) and one
per finished trial run: its trial key, run name, `tvrl.*` tags, params and final metrics (each metric's last value
and step). `load_record` logs into a store every recorded trial whose key has no finished run there: a FINISHED
child run of the study's parent with the same params, tags and final metrics, tagged `tvrl.imported_from`; the
sweep then skips those trials and the report reads them. Curves, videos and checkpoints are not recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from tvrl_bench.sweeps.state import StudyTracker

FORMAT = 1
IMPORTED_TAG = "tvrl.imported_from"


class RecordError(Exception):
    """A record file that cannot be read or a study with nothing to record: one line for the user."""


def save_record(tracking_uri: str, study: str, path: Path) -> int:
    """Write the study's finished trial runs to `path`; returns how many."""
    tracker = StudyTracker.find(tracking_uri, study)
    if tracker is None:
        raise RecordError(f"the store {tracking_uri} holds no study {study!r}: run it first (tvrl-sweep), or name the "
                          "store that holds it with --tracking-uri")
    parent = tracker.client.get_run(tracker.parent_run_id)
    lines = [{"format": FORMAT, "study": study,
              "parent_tags": {k: v for k, v in parent.data.tags.items() if k in ("tvrl.profile", "tvrl.decide")}}]
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
    path.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    return len(lines) - 1


def read_record(path: Path) -> tuple[dict, list[dict]]:
    """(header, trial records) of a record file; RecordError naming the file and line when it is not one."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise RecordError(f"{path}: cannot read the record ({exc.strerror}); give a file written by "
                          "`tvrl-bench record save`") from None
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}:{number}: not a JSON line ({exc.msg}); the file is not a record written by "
                              "`tvrl-bench record save`") from None
    if not entries or entries[0].get("format") != FORMAT or "study" not in entries[0]:
        raise RecordError(f"{path}:1: no record header (format {FORMAT}, study); write the file with "
                          "`tvrl-bench record save STUDY`")
    for number, entry in enumerate(entries[1:], start=2):
        if not {"key", "params", "metrics"} <= set(entry):
            raise RecordError(f"{path}:{number}: a trial record needs key, params and metrics")
    return entries[0], entries[1:]


def load_record(tracking_uri: str, path: Path) -> tuple[str, int, int]:
    """Log the record's trials that the store lacks; returns (study, imported, already there)."""
    header, trials = read_record(path)
    study = header["study"]
    tracker = StudyTracker.open(tracking_uri, study, [], [], "")
    client = tracker.client
    for tag, value in header.get("parent_tags", {}).items():
        if tag not in client.get_run(tracker.parent_run_id).data.tags:
            client.set_tag(tracker.parent_run_id, tag, value)
    runs = tracker.runs()
    imported = present = 0
    from mlflow.entities import Metric, Param

    for trial in trials:
        if runs.finished(trial["key"]):
            present += 1
            continue
        tags = {**trial.get("tags", {}), "tvrl.trial_key": trial["key"], "tvrl.role": "trial", "tvrl.study": study,
                "mlflow.parentRunId": tracker.parent_run_id, IMPORTED_TAG: str(path)}
        run_id = client.create_run(tracker.experiment_id, run_name=trial.get("run_name"), tags=tags).info.run_id
        params = [Param(k, str(v)) for k, v in trial["params"].items()]
        metrics = [Metric(k, float(v), 0, int(s)) for k, (v, s) in trial["metrics"].items()]
        for i in range(0, max(len(params), len(metrics)), 100):
            client.log_batch(run_id, metrics=metrics[i:i + 100], params=params[i:i + 100])
        client.set_terminated(run_id, "FINISHED")
        imported += 1
    tracker.finish({})
    return study, imported, present
