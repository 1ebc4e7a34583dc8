"""What `tvrl-sweep --dry-run` expects the rest of a study to cost: the trials it would still run and the wall time.

Trials are of two kinds, costed apart: base rows (0 optimizer steps: an evaluation only) and trained trials.
Minutes per trial of a kind, in this order:

1. measured: the median of `end_time - start_time` over the study's FINISHED trial runs of that kind in the store
   (a run is a base row when its param `method` is 'base' or `training.trial.steps` is 0), taken from the runs
   the dry run already read (state.py's StudyRuns: one search over the study's runs, never one call per run);
2. else the reference figure of REFERENCE_MINUTES (the default toy profile on the 2-core development machine, 2
   trials at a time; docs/performance.md).

Wall time with W workers (`wall_minutes`): the minutes of every trial to run, summed and divided by W, and at least
the longest trial. Packing is not simulated; a trial resumed from its checkpoint is counted whole.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from tvrl_bench.sweeps.plan import TrialSpec
from tvrl_bench.sweeps.records import IMPORTED_TAG
from tvrl_bench.sweeps.state import StudyRuns

# Minutes per trial of the default toy profile (components/profiles/toy.gin), measured on the 2-core development
# machine with --workers 2 beside other work (docs/performance.md, "What a study costs"): the rewards study's
# trained trials took 2.6-7.2 min two at a time (median about 5); a base row (its final and wide evaluations only)
# 0.4-0.5 min (the rewards study's vivid-critic rows, 2026-12-07).
REFERENCE_MINUTES = {"base": 0.5, "trained": 5.0}
REFERENCE_SOURCE = "reference figures, docs/performance.md"
KINDS = ("base", "trained")


def is_base_run(run) -> bool:
    """True for the run of an untrained base row: its param `method` is 'base' or `training.trial.steps` is 0."""
    params = run.data.params
    return params.get("method") == "base" or params.get("training.trial.steps", "").strip() == "0"


def is_base_trial(spec: TrialSpec) -> bool:
    """True for a planned trial that trains no steps (a base row, or any trial of `--steps 0`)."""
    return spec.base or spec.steps == 0


def measured_minutes(runs: StudyRuns | None) -> dict[str, list[float]]:
    """Minutes of each FINISHED trial run of the study with both times, by kind ('base', 'trained'); runs that
    `tvrl-bench record load` logged (tag tvrl.imported_from) are left out: their times are the load's, not a trial's."""
    found: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for run in (r for key_runs in (runs.by_key.values() if runs else ()) for r in key_runs):
        start, end = run.info.start_time, run.info.end_time
        if IMPORTED_TAG in run.data.tags:
            continue
        if run.info.status == "FINISHED" and start and end and end >= start:
            found["base" if is_base_run(run) else "trained"].append((end - start) / 60_000)
    return found


def wall_minutes(minutes: list[float], workers: int) -> float:
    """Wall time of trials taking `minutes` each, `workers` at a time: their sum / workers, at least the longest."""
    return max(sum(minutes) / workers, max(minutes, default=0.0))


@dataclass(frozen=True)
class Estimate:
    """Trials to run by kind, minutes per trial by kind, and how many finished runs measured each kind (0: its
    minutes are the reference figure)."""

    counts: dict[str, int]
    minutes: dict[str, float]
    measured: dict[str, int]
    workers: int

    @property
    def wall(self) -> float:
        return wall_minutes([self.minutes[k] for k in KINDS for _ in range(self.counts[k])], self.workers)

    def line(self, scope: str = "") -> str:
        """One line: 'expected: 9 trials to run (3 base rows, 6 trained) x measured 0.9 / 5.1 min each, 2 at a time:
        about 17 min (from 57 finished trials of this study in the store)'; `scope` ('this stage') follows 'run'."""
        where = f" in {scope}" if scope else ""
        total = sum(self.counts.values())
        if total == 0:
            return f"expected: nothing to run{where} (every trial{where} is done)"
        shown = [k for k in KINDS if self.counts[k]]
        sources = {self._source(k) for k in shown}
        each = " / ".join(f"{self._source(k) + ' ' if len(sources) > 1 else ''}{self.minutes[k]:.1f}" for k in shown)
        if sources == {"measured"}:
            each = f"measured {each}"
        used = sum(self.measured[k] for k in shown)
        notes = [f"from {used} finished trial{_s(used)} of this study in the store"] if used else []
        notes += [REFERENCE_SOURCE] if "reference" in sources else []
        counts = ", ".join(f"{self.counts[k]} {'base row' + _s(self.counts[k]) if k == 'base' else k}" for k in shown)
        return (f"expected: {total} trial{_s(total)} to run{where} ({counts}) x {each} min each, "
                f"{self.workers} at a time: about {duration(self.wall)} ({'; '.join(notes)})")

    def _source(self, kind: str) -> str:
        return "measured" if self.measured[kind] else "reference"


def estimate(specs: list[TrialSpec], runs: StudyRuns | None, workers: int) -> Estimate:
    """The cost of the trials of `specs` that have no FINISHED run in `runs` (all of them when None)."""
    todo = [s for s in specs if runs is None or not runs.finished(s.key)]
    counts = {"base": sum(map(is_base_trial, todo))}
    counts["trained"] = len(todo) - counts["base"]
    found = measured_minutes(runs)
    minutes = {k: statistics.median(found[k]) if found[k] else REFERENCE_MINUTES[k] for k in KINDS}
    return Estimate(counts, minutes, {k: len(found[k]) for k in KINDS}, workers)


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def duration(minutes: float) -> str:
    """'17 min', '2 h 5 min', '3 h' (rounded to the minute, at least 1 min)."""
    rounded = max(1, int(minutes + 0.5))
    if rounded < 60:
        return f"{rounded} min"
    hours, rest = divmod(rounded, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"
