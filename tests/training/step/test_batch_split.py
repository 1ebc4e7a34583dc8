"""How a step's rollouts split over processes, minibatches and micro-batches (training/step/batch_split.py)."""

from __future__ import annotations

import pytest

from tvrl_bench.config.errors import ConfigError
from tvrl_bench.training.step.batch_split import BatchSplit


def test_a_step_splits_over_processes_and_the_micro_batch_is_capped_by_a_minibatch():
    assert BatchSplit.of(prompts_per_step=4, group_size=3, minibatches=2, micro_batch=8, processes=2) == BatchSplit(2, 6, 3)
    assert BatchSplit.of(prompts_per_step=2, group_size=4, minibatches=1, micro_batch=4, processes=1) == BatchSplit(2, 8, 4)


@pytest.mark.parametrize("values,named", [
    (dict(prompts_per_step=3, group_size=4, minibatches=1, micro_batch=4, processes=2), "prompts_per_step = 3"),
    (dict(prompts_per_step=2, group_size=3, minibatches=4, micro_batch=4, processes=1), "minibatches = 4"),
    (dict(prompts_per_step=2, group_size=4, minibatches=1, micro_batch=3, processes=1), "micro_batch = 3"),
])
def test_a_value_that_does_not_fit_is_named(values, named):
    with pytest.raises(ConfigError, match=f"training.trial.{named}"):
        BatchSplit.of(**values)
