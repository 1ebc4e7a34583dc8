"""The objective's gradient over one minibatch, by the pass its `update` names: the trained transitions' log-probs
(training/step/update.py) or flow matching on the rollouts' clean samples (training/step/matching.py)."""

from __future__ import annotations

import torch

from tvrl_bench.objectives.base import MATCHING
from tvrl_bench.policies.base import Policy
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.seeding import generator
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.step.collect import StepBatch
from tvrl_bench.training.step.matching import accumulate_matching_gradient
from tvrl_bench.training.step.update import accumulate_policy_gradient


def accumulate_objective_gradient(s: TrialSettings, policy: Policy, processes: Processes, batch: StepBatch,
                                  rows: torch.Tensor, minibatch: int, micro_batch: int,
                                  balance: torch.Tensor | None) -> dict[str, float]:
    """Backpropagate the objective over the batch's rollouts rows[M] (minibatch `minibatch`); returns its stats.
    The ratio check runs on the first minibatch of a transition objective; `balance` are its per-step factors."""
    if s.objective.update == MATCHING:
        mine = slice(processes.rank * len(batch.prompts), (processes.rank + 1) * len(batch.prompts))
        return accumulate_matching_gradient(
            policy, s.objective, batch.rollout, batch.cond, rows, batch.all_groups[mine].to(rows.device),
            batch.advantages, batch.weights, micro_batch, generator(s.seed, "matching", batch.step, minibatch,
                                                                    processes.rank))
    return accumulate_policy_gradient(
        policy, s.sampler, s.objective, batch.rollout, batch.cond, rows, batch.advantages, batch.weights, micro_batch,
        check_ratio_tolerance=s.ratio_tolerance if minibatch == 0 else None, balance=balance)
