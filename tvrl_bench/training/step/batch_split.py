"""How a step's rollouts split over processes, minibatches and micro-batches, checked once when the trial starts."""

from __future__ import annotations

from dataclasses import dataclass

from tvrl_bench.config.errors import ConfigError


@dataclass(frozen=True)
class BatchSplit:
    """prompts: this process's prompts per step; rollouts: its rollouts (prompts x group_size); micro_batch:
    rollouts per policy forward (at most a minibatch's rollouts), the same when sampling and when training."""

    prompts: int
    rollouts: int
    micro_batch: int

    @classmethod
    def of(cls, prompts_per_step: int, group_size: int, minibatches: int, micro_batch: int, processes: int) -> BatchSplit:
        """The split of a step over `processes`; ConfigError naming the `training.trial` value that does not fit."""
        if prompts_per_step % processes:
            raise ConfigError(
                f"training.trial.prompts_per_step = {prompts_per_step} must be divisible by the {processes} processes"
            )
        prompts = prompts_per_step // processes
        rollouts = prompts * group_size
        if rollouts % minibatches:
            raise ConfigError(
                f"training.trial.minibatches = {minibatches} must divide the {rollouts} rollouts of a step on each "
                "process"
            )
        rows = rollouts // minibatches
        chunk = min(micro_batch, rows)
        if rows % chunk:
            raise ConfigError(
                f"training.trial.micro_batch = {micro_batch} must divide the {rows} rollouts of a minibatch "
                "(sampling and training must split rollouts the same way for the ratio to start at exactly 1)"
            )
        return cls(prompts, rollouts, chunk)
