"""A sweep's failures on record: a trial that failed for good (its error line, a FAILED run even when its
process never logged one) and the parent run ended as FAILED or KILLED."""

from __future__ import annotations

import logging
from pathlib import Path

from tvrl_bench.executors.base import log_file
from tvrl_bench.sweeps.outcome import SweepOptions, SweepSummary
from tvrl_bench.sweeps.plan import TrialSpec
from tvrl_bench.sweeps.state import StudyTracker
from tvrl_bench.sweeps.study import Study
from tvrl_bench.tracking.params import axis_run_name, method_from_presets

log = logging.getLogger("tvrl_bench.sweeps")


def record_failure(spec: TrialSpec, tracker: StudyTracker, options: SweepOptions, attempt: int, code: int,
                   out: Path, study: Study, summary: SweepSummary) -> None:
    """Count the trial FAILED, keep its error line, and make sure a FAILED run of it exists for the report."""
    log_path = Path(log_file(out / "logs" / study.name, spec.key, attempt))
    error = last_error_line(log_path) or f"the trial process exited with code {code}"
    summary.failed.append(spec)
    summary.errors[spec.key] = error
    log.error("trial %s (%s) failed %d times; see %s", spec.key, spec.title, attempt, log_path)
    if tracker.fail_killed(spec.key, attempt, error):  # stopped from outside (scancel): KILLED -> FAILED
        return
    if not tracker.has_attempt(spec.key, attempt):  # it died before logging a run (or before its own record)
        params = {**{axis: Path(v).stem for axis, v in spec.labels.items()}, "seed": spec.seed}
        if spec.base or "credit" in spec.labels:
            params["method"] = method_from_presets({axis: Path(v).stem for axis, v in spec.labels.items()}, spec.base)
        tracker.record_failure(options.tracking_uri, spec.key, attempt, axis_run_name(spec.labels, spec.seed, spec.base),
                               params, error)


def last_error_line(path: Path) -> str | None:
    """The last one-line error in a trial's log: the trial's own (`tvrl-train: ...`) or what its executor saw
    happen to it (`tvrl-sweep: ...`, e.g. a Slurm job cancelled), if there is one."""
    try:
        lines = path.read_text(errors="replace").splitlines()[-200:]
    except OSError:
        return None
    for line in reversed(lines):
        for prefix in ("tvrl-train: ", "tvrl-sweep: "):
            if line.startswith(prefix):
                return line[len(prefix):]
    return None


def end_parent(tracker: StudyTracker, status: str, summary: SweepSummary, folders: Path | None = None) -> None:
    """End the parent run as `status`; after a stop, also mark child runs left RUNNING by dead trials KILLED."""
    try:
        if folders is not None:
            tracker.mark_orphans(folders)
        counts = {"finished": len(summary.finished) + len(summary.skipped), "failed": len(summary.failed)}
        if summary.signal is not None:
            counts["stopped"] = len(summary.stopped) + len(summary.not_started)
        tracker.finish(counts, status=status)
    except Exception as exc:  # the store may be what failed; the original error matters more
        log.warning("could not mark the study's parent run %s: %s", status, exc)
