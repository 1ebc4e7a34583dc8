"""The sweep driver: plan a study, skip what is done, run the rest on an executor with retries, report.

Before anything runs: the study and every trial's config are checked (plan), one sweep at a time may own the
study's folder, and no trial of it may still be running from an earlier sweep (their folders' locks) unless
the executor takes it over (a Slurm job outlives its sweep).
Resume: rerunning a sweep skips every trial key that has a FINISHED run, marks RUNNING runs KILLED (their sweep
died), and reruns the others; a rerun trial continues from its checkpoint as a new attempt. A trial whose
process fails is retried until `max_attempts` (not after exit code 2, a mistake in its config or files that a
retry would repeat); then it stays FAILED (with a FAILED run even when its process never logged one) and the
other trials go on.
Stopping: SIGTERM, SIGINT or SIGHUP is forwarded to the running trials, which checkpoint at their next step
boundary and mark their runs KILLED; no new trial starts; the parent run is marked KILLED and a rerun resumes.
A second signal is forwarded again (the trials then stop without waiting for the step to end).
The options and the summary are outcome.py, the signal handling stop_request.py, the failures on record
failures.py, what --dry-run prints dry_run.py.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path

from tqdm import tqdm

from tvrl_bench.executors.base import CANCELLED, LEFT_RUNNING, NOT_STARTED, Executor, TrialCommand, log_file
from tvrl_bench.sweeps.dry_run import describe_plan
from tvrl_bench.sweeps.failures import end_parent, last_error_line, record_failure
from tvrl_bench.sweeps.outcome import SweepOptions, SweepSummary
from tvrl_bench.sweeps.plan import TrialSpec, expand, load_study
from tvrl_bench.sweeps.stage_record import check_store_matches, decisions_csv, fingerprint_of, record
from tvrl_bench.sweeps.stages import StagePlan, decide, stage_plan
from tvrl_bench.sweeps.state import StudyTracker
from tvrl_bench.sweeps.stop_request import StopRequest
from tvrl_bench.sweeps.study import Study
from tvrl_bench.sweeps.view import study_links
from tvrl_bench.tracking.store import tracking_errors
from tvrl_bench.training.trial.lock import FolderLock, TrialBusy, holder

__all__ = ["SWEEP_LOCK", "SweepOptions", "SweepSummary", "check_not_running", "describe_plan",
           "last_error_line", "plan", "regenerate_tables", "run_sweep", "trial_command"]

log = logging.getLogger("tvrl_bench.sweeps")

USAGE_ERROR = 2  # tvrl-train's exit code for a mistake in the config or files: a retry would fail the same way
SWEEP_LOCK = ".sweep.lock"


def plan(study_file: str, options: SweepOptions) -> tuple[Study, list[TrialSpec]]:
    """Load, check and expand the study (all config errors surface here, before anything runs)."""
    study, resolved = load_study(study_file, options.profile)
    overrides = [f"training.trial.steps = {options.steps}"] if options.steps is not None else []
    return study, expand(study, resolved, overrides)


def check_not_running(study: Study, trials: list[TrialSpec], folders: Path, adopted: set[str] = frozenset()) -> None:
    """TrialBusy when a trial of the study is still running in a live process (an earlier sweep's orphan), unless
    the executor takes it over (`adopted`: keys of jobs a scheduler runs on from an earlier sweep)."""
    busy = [(spec, pid) for spec in trials
            if spec.key not in adopted and (pid := holder(folders / spec.key)) is not None]
    if busy:
        listed = ", ".join(f"{spec.key} ({spec.title}) in process {pid or '?'}" for spec, pid in busy[:5])
        pids = " ".join(str(pid) for _, pid in busy if pid)
        raise TrialBusy(
            f"{len(busy)} trial(s) of study {study.name} are still running from an earlier sweep: {listed}; wait for "
            f"them to end or stop them (`kill {pids or 'PID'}`: they checkpoint and stop), then rerun"
        )


def run_sweep(study_file: str, executor_factory, options: SweepOptions,
              planned: tuple[Study, list[TrialSpec]] | None = None) -> SweepSummary:
    """Run (or resume) every trial of the study (`planned`: its plan, when already made); returns what happened.
    A study with `decide` runs in stages (stages.py): each stage's trials, then its decisions."""
    started = time.perf_counter()
    study, trials = planned or plan(study_file, options)
    staged = stage_plan(study, trials, study_file) if study.decide is not None else None
    uri = options.tracking_uri
    with tracking_errors(uri):
        found = StudyTracker.find(uri, study.name)
        fingerprint = fingerprint_of(staged) if staged else None
        if found is not None:
            check_store_matches(found, study, trials, fingerprint, study_file)
    if options.dry_run:
        with tracking_errors(uri):
            print(describe_plan(study, trials, found, staged, options.workers))
        return SweepSummary(study.name, seconds=time.perf_counter() - started)
    out = Path(options.out_dir)
    folders = out / "runs" / study.name  # tvrl-train puts each trial in folders/<key>
    with FolderLock(folders, SWEEP_LOCK, what=f"study {study.name}"):
        executor: Executor = executor_factory()
        try:
            check_not_running(study, trials, folders, executor.live_trials(study.name))
            with tracking_errors(uri):
                tracker = StudyTracker.open(uri, study.name, study.tables, list(study.axes), str(out))  # first
                record(tracker.client, tracker.parent_run_id, study, fingerprint)
        except BaseException:
            executor.shutdown()
            raise
        summary = SweepSummary(study.name, links=study_links(uri, tracker.experiment_id))
        try:
            with tracking_errors(uri):
                if staged is None:
                    _run_trials(study, trials, tracker, executor, options, summary, folders)
                else:
                    _run_stages(staged, study, tracker, executor, options, summary, folders)
        except BaseException:
            executor.shutdown()
            end_parent(tracker, "FAILED", summary)
            raise
        executor.shutdown()
        summary.seconds = time.perf_counter() - started
        if summary.signal is not None:
            end_parent(tracker, "KILLED", summary, folders)
            return summary
        with tracking_errors(uri):
            tracker.finish({"finished": len(summary.finished) + len(summary.skipped), "failed": len(summary.failed)})
    if options.regenerate_tables:
        summary.reports = regenerate_tables(study, options)
    return summary


def _run_stages(staged: StagePlan, study: Study, tracker: StudyTracker, executor: Executor, options: SweepOptions,
                summary: SweepSummary, folders: Path) -> None:
    """Stage by stage: run the stage's unfinished trials, decide from every finished run, stop when every
    comparison is decided or the stages run out; the decisions go to the parent run and the summary."""
    open_arms: set[str] | None = None
    for stage in range(1, staged.design.max_stages + 1):
        specs = staged.stage_trials(stage, open_arms)
        log.info("study %s: stage %d of at most %d: %d trials", study.name, stage, staged.design.max_stages, len(specs))
        _run_trials(study, specs, tracker, executor, options, summary, folders)
        if summary.signal is not None:
            return
        runs = tracker.runs()
        results = decide(staged, runs.latest_finished, stage)
        tracker.client.log_text(tracker.parent_run_id, decisions_csv(results), "decisions.csv")
        summary.decisions = (staged, results)
        if not results or len(results) < stage or not results[-1].open:
            break
        open_arms = {c.arm for c in results[-1].open}
    runs = tracker.runs()
    every = {s.key for stage in range(1, staged.design.max_stages + 1) for s in staged.stage_trials(stage)}
    summary.trials_run = sum(1 for key in every if runs.finished(key))


def _run_trials(study: Study, trials: list[TrialSpec], tracker: StudyTracker, executor: Executor,
                options: SweepOptions, summary: SweepSummary, folders: Path) -> None:
    """Launch every unfinished trial, retry failures, stop on a signal; fills `summary`."""
    orphans = tracker.mark_orphans(folders)
    if orphans:
        log.info("marked %d orphaned RUNNING trial runs KILLED", orphans)
    runs = tracker.runs()
    todo = []
    for spec in trials:
        (summary.skipped if runs.finished(spec.key) else todo).append(spec)
    out = Path(options.out_dir)
    attempts = {spec.key: runs.attempts(spec.key) for spec in todo}
    bar = tqdm(total=len(trials), initial=len(summary.skipped), desc=f"sweep {study.name}", unit="trial",
               disable=not options.progress)
    pending: dict[Future, TrialSpec] = {}
    stop = StopRequest(executor)

    def launch(spec: TrialSpec) -> None:
        attempts[spec.key] += 1
        command = trial_command(spec, study, options, tracker.parent_run_id, attempts[spec.key], out)
        pending[executor.submit(command)] = spec

    stop.install()
    try:
        for spec in todo:
            launch(spec)
        while pending:
            done, _ = wait(list(pending), timeout=1.0, return_when=FIRST_COMPLETED)
            for future in done:
                spec = pending.pop(future)
                code = future.result()
                if code == 0:
                    summary.finished.append(spec)
                    bar.update(1)
                elif stop.signum is not None:
                    stopped = {NOT_STARTED: summary.not_started, LEFT_RUNNING: summary.left_running}
                    stopped.get(code, summary.stopped).append(spec)
                elif attempts[spec.key] < options.max_attempts and code not in (USAGE_ERROR, CANCELLED):
                    log.warning("trial %s (%s) exited %d; retrying (attempt %d)", spec.key, spec.title, code, attempts[spec.key] + 1)
                    launch(spec)
                else:
                    record_failure(spec, tracker, options, attempts[spec.key], code, out, study, summary)
                    bar.update(1)
                bar.set_postfix(left=len(pending), finished=len(summary.finished), failed=len(summary.failed))
    finally:
        stop.restore()
        bar.close()
    summary.signal = stop.signum


def trial_command(spec: TrialSpec, study: Study, options: SweepOptions, parent_run_id: str, attempt: int, out: Path,
                  make_log_folder: bool = True) -> TrialCommand:
    args = [*spec.files, "--gin_bindings", *spec.bindings]
    args += ["--tracking-uri", options.tracking_uri, "--experiment", study.name, "--study", study.name]
    args += ["--parent-run-id", parent_run_id, "--attempt", str(attempt), "--out", str(out / "runs")]
    for axis, value in spec.labels.items():
        args += ["--label", f"{axis}={Path(value).stem}"]
    log_path = log_file(out / "logs" / study.name, spec.key, attempt, create=make_log_folder)
    return TrialCommand(tuple(args), num_gpus=spec.num_gpus, log_path=log_path, study=study.name, key=spec.key)


def regenerate_tables(study: Study, options: SweepOptions) -> dict:
    """The study's tables, through the report engine (the same as `tvrl-report --study NAME`)."""
    from tvrl_bench.report import regenerate

    return regenerate(study.name, options.tracking_uri, Path(options.out_dir) / "reports", study.tables or None)
