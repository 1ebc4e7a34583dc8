"""What a sweep is asked to do (SweepOptions) and what happened (SweepSummary, with its one-line report)."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field

from tvrl_bench.sweeps.plan import TrialSpec
from tvrl_bench.sweeps.view import StudyLinks
from tvrl_bench.tracking.store import DEFAULT_TRACKING_URI


@dataclass
class SweepOptions:
    tracking_uri: str = DEFAULT_TRACKING_URI
    out_dir: str = "."
    profile: str | None = None
    steps: int | None = None
    max_attempts: int = 2
    dry_run: bool = False
    workers: int = 2  # trials at once (the local executor's --workers): the dry run's expected wall time
    progress: bool = True
    regenerate_tables: bool = True


@dataclass
class SweepSummary:
    study: str
    finished: list[TrialSpec] = field(default_factory=list)
    failed: list[TrialSpec] = field(default_factory=list)
    skipped: list[TrialSpec] = field(default_factory=list)
    stopped: list[TrialSpec] = field(default_factory=list)  # interrupted by a signal: checkpointed, run KILLED
    not_started: list[TrialSpec] = field(default_factory=list)
    left_running: list[TrialSpec] = field(default_factory=list)  # left to a scheduler's queue on a stop (Slurm)
    errors: dict[str, str] = field(default_factory=dict)  # trial key -> the last error line of its log
    signal: int | None = None
    seconds: float = 0.0
    reports: dict | None = None
    links: StudyLinks | None = None  # the study's runs and charts in MLflow's UI
    decisions: tuple | None = None  # a staged study's (StagePlan, [StageResult]) after its last stage run
    trials_run: int = 0  # a staged study's finished trials over all its stages

    def decision_lines(self) -> list[str]:
        """A staged study's decisions, for the sweep's last lines ([] otherwise)."""
        if self.decisions is None:
            return []
        from tvrl_bench.sweeps.stage_record import decision_lines

        staged, results = self.decisions
        return decision_lines(staged.design, results, staged.arms.controls, self.trials_run, staged.most_trials())

    def _left(self) -> str:
        return f", {len(self.left_running)} left running in the scheduler's queue" if self.left_running else ""

    def line(self) -> str:
        if self.signal is not None:
            name = signal.Signals(self.signal).name
            return (
                f"study {self.study}: stopped by {name}: {len(self.stopped)} running trials checkpointed and marked "
                f"KILLED, {len(self.finished)} finished, {len(self.failed)} failed, {len(self.not_started)} not "
                f"started{self._left()}; the parent run is KILLED; rerun the same command to resume "
                f"({self.seconds:.1f} s)"
            )
        return (
            f"study {self.study}: {len(self.finished)} finished, {len(self.failed)} failed, "
            f"{len(self.skipped)} skipped (already finished) in {self.seconds:.1f} s"
        )
