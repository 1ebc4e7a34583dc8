"""Evaluation of a sharded policy: every process takes part in each forward, the main process alone scores and logs.

A sharded policy's forward gathers parameters from every process (training/sharding.py), so when the main process
generates evaluation videos (`training/evaluation.py::TrialEvaluation`), the other processes must run the same
forwards in the same order. These functions make the same `generate` calls as `TrialEvaluation.generate`,
`.subset` and `.full` (same prompts, chunks, micro-batches and noise generator) and discard the videos; scoring by
the evaluator and the critic, which do not touch the policy, stays on the main process.
"""

from __future__ import annotations

from tvrl_bench.training.evaluation import TrialEvaluation
from tvrl_bench.training.rollout import chunks, generate
from tvrl_bench.training.seeding import generator


def _generate(evaluation: TrialEvaluation, count: int) -> None:
    """The forwards of `evaluation.generate(count)` (videos[count, F, 3, H, W], discarded)."""
    s = evaluation.s
    prompts = [it.prompt for it in evaluation.items[:count]]
    generate(evaluation.policy, s.sampler, s.schedule, prompts, generator(s.seed, "eval"), evaluation.micro_batch)


def samples_alongside(evaluation: TrialEvaluation, count: int) -> None:
    """Take part in the main process's `evaluation.generate(count)` (the start samples)."""
    _generate(evaluation, count)


def subset_alongside(evaluation: TrialEvaluation) -> None:
    """Take part in the main process's `evaluation.subset()` (evaluation during training)."""
    _generate(evaluation, evaluation.s.eval_subset or len(evaluation.items))


def full_alongside(evaluation: TrialEvaluation) -> None:
    """Take part in the main process's `evaluation.full()`: every eval prompt, chunk by chunk, one noise stream."""
    s = evaluation.s
    g = generator(s.seed, "eval")
    for c in chunks(len(evaluation.items), evaluation.micro_batch):
        prompts = [it.prompt for it in evaluation.items[c]]
        generate(evaluation.policy, s.sampler, s.schedule, prompts, g, evaluation.micro_batch)
