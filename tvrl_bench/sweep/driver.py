"""The sweep driver: plan a study, skip what is done, run the rest on an executor with retries, report.

Resume: rerunning a sweep skips every trial key that has a FINISHED run, marks RUNNING runs KILLED (their sweep
died), and reruns the others; a rerun trial continues from its checkpoint as a new attempt. A trial whose
process fails is retried until `max_attempts`; then it stays FAILED and the other trials go on.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from tvrl_bench.sweep.executors.base import Executor, TrialCommand
from tvrl_bench.sweep.executors.local import log_file
from tvrl_bench.sweep.plan import TrialSpec, expand, load_study
from tvrl_bench.sweep.state import StudyTracker
from tvrl_bench.sweep.study import Study

log = logging.getLogger("tvrl_bench.sweep")


@dataclass
class SweepOptions:
    tracking_uri: str = "sqlite:///mlflow.db"
    out_dir: str = "."
    profile: str | None = None
    steps: int | None = None
    max_attempts: int = 2
    dry_run: bool = False
    progress: bool = True
    regenerate_tables: bool = True


@dataclass
class SweepSummary:
    study: str
    finished: list[TrialSpec] = field(default_factory=list)
    failed: list[TrialSpec] = field(default_factory=list)
    skipped: list[TrialSpec] = field(default_factory=list)
    seconds: float = 0.0
    reports: dict | None = None

    def line(self) -> str:
        return (
            f"study {self.study}: {len(self.finished)} finished, {len(self.failed)} failed, "
            f"{len(self.skipped)} skipped (already finished) in {self.seconds:.1f} s"
        )


def plan(study_file: str, options: SweepOptions) -> tuple[Study, list[TrialSpec]]:
    """Load and expand the study (all config errors surface here, before anything runs)."""
    study, resolved = load_study(study_file, options.profile)
    overrides = [f"training.trial.steps = {options.steps}"] if options.steps is not None else []
    return study, expand(study, resolved, overrides)


def describe_plan(study: Study, trials: list[TrialSpec], tracker: StudyTracker | None) -> str:
    """The plan as text: each trial, its key and whether it is done."""
    runs = tracker.runs() if tracker else None
    lines = [f"study {study.name} ({len(trials)} trials; profile {study.profile})"]
    for spec in trials:
        state = "pending"
        if runs is not None and runs.finished(spec.key):
            state = "done"
        elif runs is not None and runs.attempts(spec.key):
            state = f"unfinished ({runs.attempts(spec.key)} attempts)"
        lines.append(f"  {spec.key}  {state:<24} {spec.title}")
    return "\n".join(lines)


def run_sweep(study_file: str, executor_factory, options: SweepOptions) -> SweepSummary:
    """Run (or resume) every trial of the study; returns what happened."""
    started = time.perf_counter()
    study, trials = plan(study_file, options)
    if options.dry_run:
        print(describe_plan(study, trials, StudyTracker.find(options.tracking_uri, study.name)))
        return SweepSummary(study.name, seconds=time.perf_counter() - started)
    tracker = StudyTracker.open(options.tracking_uri, study.name, study.tables)  # the store exists before any worker
    orphans = tracker.mark_orphans()
    if orphans:
        log.info("marked %d orphaned RUNNING trial runs KILLED", orphans)
    runs = tracker.runs()
    summary = SweepSummary(study.name)
    todo = []
    for spec in trials:
        (summary.skipped if runs.finished(spec.key) else todo).append(spec)
    executor: Executor = executor_factory()
    out = Path(options.out_dir)
    attempts = {spec.key: runs.attempts(spec.key) for spec in todo}
    bar = tqdm(total=len(trials), initial=len(summary.skipped), desc=f"sweep {study.name}", unit="trial", disable=not options.progress)
    pending: dict[Future, TrialSpec] = {}

    def launch(spec: TrialSpec) -> None:
        attempts[spec.key] += 1
        command = trial_command(spec, study, options, tracker.parent_run_id, attempts[spec.key], out)
        pending[executor.submit(command)] = spec

    try:
        for spec in todo:
            launch(spec)
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in done:
                spec = pending.pop(future)
                code = future.result()
                if code == 0:
                    summary.finished.append(spec)
                    bar.update(1)
                elif attempts[spec.key] < options.max_attempts:
                    log.warning("trial %s (%s) exited %d; retrying (attempt %d)", spec.key, spec.title, code, attempts[spec.key] + 1)
                    launch(spec)
                else:
                    log.error("trial %s (%s) failed %d times; see %s", spec.key, spec.title, attempts[spec.key], out / "logs")
                    summary.failed.append(spec)
                    bar.update(1)
                bar.set_postfix(left=len(pending), finished=len(summary.finished), failed=len(summary.failed))
    finally:
        bar.close()
        executor.shutdown()
    summary.seconds = time.perf_counter() - started
    tracker.finish({"finished": len(summary.finished) + len(summary.skipped), "failed": len(summary.failed)})
    if options.regenerate_tables:
        summary.reports = regenerate_tables(study, options)
    return summary


def trial_command(spec: TrialSpec, study: Study, options: SweepOptions, parent_run_id: str, attempt: int, out: Path) -> TrialCommand:
    args = [*spec.files, "--gin_bindings", *spec.bindings]
    args += ["--tracking-uri", options.tracking_uri, "--experiment", study.name, "--study", study.name]
    args += ["--parent-run-id", parent_run_id, "--attempt", str(attempt), "--out", str(out / "runs")]
    for axis, value in spec.labels.items():
        args += ["--label", f"{axis}={Path(value).stem}"]
    return TrialCommand(tuple(args), num_gpus=spec.num_gpus, log_path=log_file(out / "logs" / study.name, spec.key, attempt))


def regenerate_tables(study: Study, options: SweepOptions) -> dict:
    """The study's tables, through the report engine (the same as `tvrl-report --study NAME`)."""
    from tvrl_bench.report import regenerate

    return regenerate(study.name, options.tracking_uri, Path(options.out_dir) / "reports", study.tables or None)
