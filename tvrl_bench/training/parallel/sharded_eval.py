"""Evaluation of a sharded policy: every process takes part in each forward, the main process alone scores and logs.

A sharded policy's forward gathers parameters from every process (training/parallel/sharding.py), so when the main
process generates evaluation videos (`training/evaluation.py::TrialEvaluation`), the other processes must run the
same forwards in the same order. These functions run them through `TrialEvaluation`'s own methods (`generate`,
`subset_size`, `chunk_videos`) and discard the videos; scoring by the evaluator and the critic, which do not touch
the policy, stays on the main process.
"""

from __future__ import annotations

from tvrl_bench.training.evaluation import TrialEvaluation


def samples_alongside(evaluation: TrialEvaluation, count: int) -> None:
    """Take part in the main process's `evaluation.generate(count)` (the start samples)."""
    evaluation.generate(count)


def subset_alongside(evaluation: TrialEvaluation) -> None:
    """Take part in the main process's `evaluation.subset()` (evaluation during training)."""
    evaluation.generate(evaluation.subset_size())


def full_alongside(evaluation: TrialEvaluation) -> None:
    """Take part in the main process's `evaluation.full()`: its forwards, chunk by chunk, one noise stream."""
    for _ in evaluation.chunk_videos():
        pass
