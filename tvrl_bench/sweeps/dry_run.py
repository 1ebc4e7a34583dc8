"""What `tvrl-sweep --dry-run` prints: each planned trial and whether it is done, a staged study's next stage and
its decisions so far, and the expected cost of what is left (cost.py).

Reads the store through the runs of one search (state.py's StudyRuns) and creates nothing.
"""

from __future__ import annotations

from tvrl_bench.sweeps.cost import estimate
from tvrl_bench.sweeps.plan import TrialSpec
from tvrl_bench.sweeps.stage_record import decision_lines
from tvrl_bench.sweeps.stages import StagePlan, decide
from tvrl_bench.sweeps.state import StudyRuns, StudyTracker
from tvrl_bench.sweeps.study import Study


def describe_plan(study: Study, trials: list[TrialSpec], tracker: StudyTracker | None,
                  staged: StagePlan | None = None, workers: int = 2) -> str:
    """The plan as text: each trial, its key and whether it is done; for a staged study, the next stage's trials
    (the first stage's on a new study), the decisions so far and the most trials it can run; last, the trials left
    to run (of this stage, when staged) and their expected wall time with `workers` at a time."""
    runs = tracker.runs() if tracker else None
    if staged is None:
        lines = [f"study {study.name} ({len(trials)} trials; profile {study.profile})"]
        lines += [_trial_line(spec, runs) for spec in trials]
        return "\n".join(lines + [estimate(trials, runs, workers).line()])
    stage, open_arms, results = 1, None, []
    if runs is not None:
        for stage in range(1, staged.design.max_stages + 1):
            if not all(runs.finished(s.key) for s in staged.stage_trials(stage, open_arms)):
                break
            results = decide(staged, runs.latest_finished, stage)
            if not results or not results[-1].open or stage == staged.design.max_stages:
                break
            open_arms = {c.arm for c in results[-1].open}
    specs = staged.stage_trials(stage, open_arms)
    d = staged.design
    lines = [f"study {study.name} (staged: stage {stage} of at most {d.max_stages} runs {len(specs)} trials; at most "
             f"{staged.most_trials()} trials over {d.max_stages} stages of {d.seeds_per_stage} seeds; profile "
             f"{study.profile})"]
    lines += [_trial_line(spec, runs) for spec in specs]
    if results:
        lines += decision_lines(d, results, staged.arms.controls, 0, staged.most_trials())[:-1]
    return "\n".join(lines + [estimate(specs, runs, workers).line("this stage")])


def _trial_line(spec: TrialSpec, runs: StudyRuns | None) -> str:
    state = "pending"
    if runs is not None and runs.finished(spec.key):
        state = "done"
    elif runs is not None and runs.attempts(spec.key):
        state = f"unfinished ({runs.attempts(spec.key)} attempts)"
    return f"  {spec.key}  {state:<24} {spec.title}"
