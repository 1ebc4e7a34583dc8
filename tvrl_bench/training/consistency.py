"""Checks that tie settings of different components together, run before the first rollout.

The sampler's noise levels come from `training.schedule` (num_steps, shift), but the policy was distilled with its
own scheduler: a policy that reports its checkpoint's timestep shift (`scheduler_shift`, HunyuanVideo-1.5: 5.0)
must be rolled out with that shift, or every rollout is sampled on noise levels the model never saw.
"""

from __future__ import annotations

import math
from typing import Any

from tvrl_bench.config import ConfigError


def check_schedule_shift(schedule: Any, policy: Any) -> None:
    """ConfigError unless schedule.shift equals the policy's `scheduler_shift` (when the policy has one)."""
    want = getattr(policy, "scheduler_shift", None)
    if want is None:
        return
    if not math.isclose(float(schedule.shift), float(want), rel_tol=0.0, abs_tol=1e-9):
        raise ConfigError(
            f"training.schedule.shift = {schedule.shift} but the policy's checkpoint was trained with timestep shift "
            f"{want} (its scheduler/scheduler_config.json); set training.schedule.shift = {want}"
        )
