"""A study's state in MLflow: its parent run, and which trial keys are finished, orphaned or never started.

The driver owns the tracking store's setup: it creates the database (for SQLite) and the experiment, with the
study's runs view (view.py), before any worker writes. Trials are child runs tagged with `tvrl.trial_key`; resuming
a sweep skips keys that have a FINISHED run and marks RUNNING runs KILLED when no live process owns their trial
folder (training/trial/lock.py): their sweep was killed. A run whose folder is locked is someone's live trial and is
never touched.

One sweep of a study per store at a time: the parent run records its sweeping process (`tvrl.sweep_owner`: host,
pid and the process's start time, so a reused pid is not mistaken for it) and output folder; a second sweep of the
study on the same store (into another --out) is refused while that process lives on this host. A killed sweep's
RUNNING parent does not block: its process is gone.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from tvrl_bench.sweeps.view import save_study_view
from tvrl_bench.tracking.mlflow_run import experiment_id, record_failed_run
from tvrl_bench.training.trial.lock import TrialBusy, holder

OWNER_TAG, OUT_TAG = "tvrl.sweep_owner", "tvrl.sweep_out"


@dataclass
class StudyRuns:
    """The study's parent run id and its trial runs grouped by trial key."""

    parent_run_id: str
    experiment_id: str
    by_key: dict[str, list]

    def finished(self, key: str) -> bool:
        return any(r.info.status == "FINISHED" for r in self.by_key.get(key, []))

    def attempts(self, key: str) -> int:
        return len(self.by_key.get(key, []))

    def latest_finished(self, key: str):
        """The run of trial `key`'s latest finished attempt (highest tvrl.attempt, then end time, as the report
        keeps it), or None."""
        finished = [r for r in self.by_key.get(key, []) if r.info.status == "FINISHED"]

        def order(run) -> tuple[int, int]:
            attempt = run.data.tags.get("tvrl.attempt", "")
            return (int(attempt) if attempt.isdigit() else -1, run.info.end_time or 0)

        return max(finished, key=order) if finished else None


class StudyTracker:
    """Parent run lifecycle and trial lookups for one study in one tracking store."""

    def __init__(self, client, study: str, experiment_id: str, parent_run_id: str):
        self.client = client
        self.study = study
        self.experiment_id = experiment_id
        self.parent_run_id = parent_run_id

    @classmethod
    def open(cls, tracking_uri: str, study: str, tables: list[str], axes: list[str] = (), out: str = "") -> "StudyTracker":
        """The study's experiment (with its runs view, columns for `axes`) and parent run, created if missing; the
        parent is RUNNING, owned by this process sweeping into `out`, until `finish`. TrialBusy when another live
        process on this host is sweeping the study on this store."""
        from tvrl_bench.tracking.store import client_for, store_lock

        client = client_for(tracking_uri)
        exp = experiment_id(client, study, tracking_uri)
        save_study_view(client, exp, list(axes))
        with store_lock(tracking_uri):  # two sweeps starting together: one sees the other's claim
            parent = _find_parent(client, exp, study)
            if parent is None:
                tags = {"tvrl.role": "study", "tvrl.study": study}
                parent = client.create_run(exp, run_name=study, tags=tags).info.run_id
            else:
                _refuse_a_live_sweep(client.get_run(parent), study, tracking_uri)
                client.update_run(parent, status="RUNNING")
            client.set_tag(parent, OWNER_TAG, process_identity(os.getpid()))
            client.set_tag(parent, OUT_TAG, str(out))
        if tables:
            client.set_tag(parent, "tvrl.tables", ",".join(tables))
        return cls(client, study, exp, parent)

    @classmethod
    def find(cls, tracking_uri: str, study: str) -> "StudyTracker | None":
        """The study's parent run if it exists; creates nothing (for --dry-run)."""
        from tvrl_bench.tracking.store import client_for, sqlite_path

        path = sqlite_path(tracking_uri)
        if path is not None and not path.exists():
            return None  # MLflow would create an empty database

        client = client_for(tracking_uri)
        found = client.get_experiment_by_name(study)
        parent = _find_parent(client, found.experiment_id, study) if found else None
        return cls(client, study, found.experiment_id, parent) if parent else None

    def runs(self) -> StudyRuns:
        """Trial runs of this study (children of the parent), grouped by key."""
        found = self.client.search_runs(
            [self.experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{self.parent_run_id}'", max_results=50000
        )
        by_key: dict[str, list] = {}
        for run in found:
            by_key.setdefault(run.data.tags.get("tvrl.trial_key", ""), []).append(run)
        return StudyRuns(self.parent_run_id, self.experiment_id, by_key)

    def mark_orphans(self, trial_folders: Path | None = None) -> int:
        """Mark trial runs still RUNNING as KILLED when no live process owns their trial folder (under
        `trial_folders`, one folder per key); returns how many."""
        count = 0
        for key, runs in self.runs().by_key.items():
            if trial_folders is not None and holder(trial_folders / key) is not None:
                continue  # a live trial process owns it
            for run in runs:
                if run.info.status == "RUNNING":
                    self.client.set_terminated(run.info.run_id, "KILLED")
                    count += 1
        return count

    def has_attempt(self, key: str, attempt: int) -> bool:
        """True when a run of trial `key` with tag tvrl.attempt = `attempt` exists."""
        return any(r.data.tags.get("tvrl.attempt") == str(attempt) for r in self.runs().by_key.get(key, []))

    def fail_killed(self, key: str, attempt: int, error: str) -> bool:
        """Mark the latest run of trial `key`'s attempt FAILED with `error` (tag tvrl.error) when it ended KILLED (its
        process was stopped from outside the sweep, e.g. by scancel); False when there is no such run."""
        runs = [r for r in self.runs().by_key.get(key, []) if r.data.tags.get("tvrl.attempt") == str(attempt)]
        latest = max(runs, key=lambda r: r.info.start_time or 0, default=None)
        if latest is None or latest.info.status != "KILLED":
            return False
        self.client.set_tag(latest.info.run_id, "tvrl.error", error[:4000])
        self.client.set_terminated(latest.info.run_id, "FAILED")
        return True

    def record_failure(self, tracking_uri: str, key: str, attempt: int, run_name: str, params: dict, error: str) -> str:
        """A FAILED child run for a trial whose process failed before logging one (so the report lists it)."""
        tags = {"tvrl.trial_key": key, "tvrl.attempt": str(attempt), "tvrl.role": "trial", "tvrl.study": self.study,
                "mlflow.parentRunId": self.parent_run_id}
        return record_failed_run(tracking_uri, self.study, run_name, tags, params, error)

    def finish(self, summary: dict[str, int], status: str | None = None) -> None:
        """Tag the parent with the counts and end it: FAILED when a trial failed, else FINISHED (or `status`)."""
        for name, value in summary.items():
            self.client.set_tag(self.parent_run_id, f"tvrl.{name}", str(value))
        self.client.set_terminated(self.parent_run_id, status or ("FAILED" if summary.get("failed") else "FINISHED"))


def _find_parent(client, experiment: str, study: str) -> str | None:
    found = client.search_runs(
        [experiment],
        filter_string=f"tags.`tvrl.role` = 'study' and tags.`tvrl.study` = '{study}'",
        order_by=["attributes.start_time DESC"],
        max_results=1,
    )
    return found[0].info.run_id if found else None


def process_identity(pid: int) -> str:
    """`host:pid:start` for a live process (start: its start time in clock ticks since boot, from /proc), or
    `host:pid:` where /proc is not there."""
    try:
        start = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        start = ""
    return f"{socket.gethostname()}:{pid}:{start}"


def _refuse_a_live_sweep(parent, study: str, tracking_uri: str) -> None:
    owner = parent.data.tags.get(OWNER_TAG, "")
    if parent.info.status != "RUNNING" or owner.count(":") < 2:
        return
    host, pid, start = owner.rsplit(":", 2)
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid() or not start:
        return  # another machine's sweep cannot be checked; a killed one must not block
    if process_identity(int(pid)) == owner:
        out = parent.data.tags.get(OUT_TAG) or "?"
        raise TrialBusy(
            f"study {study} is being swept right now by process {pid} into {out} on the store {tracking_uri}; "
            f"a second sweep would run every trial twice: wait for it to end or stop it (`kill {pid}`: it "
            "checkpoints and stops), then rerun"
        )
