"""The schedule's timestep shift must be the policy checkpoint's."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tvrl_bench.config import ConfigError
from tvrl_bench.training.schedule import Schedule
from tvrl_bench.training.consistency import check_schedule_shift


def test_a_shift_other_than_the_checkpoints_is_refused_with_the_fix():
    policy = SimpleNamespace(scheduler_shift=5.0)
    check_schedule_shift(Schedule(shift=5.0), policy)
    with pytest.raises(ConfigError, match=r"training.schedule.shift = 5.0"):
        check_schedule_shift(Schedule(shift=1.0), policy)


@pytest.mark.parametrize("policy", [SimpleNamespace(), SimpleNamespace(scheduler_shift=None)],
                         ids=["no-attribute", "none"])
def test_a_policy_without_a_scheduler_shift_accepts_any_shift(policy):
    for shift in (0.5, 1.0, 3.0, 5.0, 17.0):
        schedule = Schedule(shift=shift)
        # a policy that states 7.0 refuses each of these shifts ...
        with pytest.raises(ConfigError, match=r"training.schedule.shift = 7.0"):
            check_schedule_shift(schedule, SimpleNamespace(scheduler_shift=7.0))
        # ... one that states none accepts it, and neither the schedule nor the policy is touched
        before = vars(policy).copy()
        assert check_schedule_shift(schedule, policy) is None
        assert schedule.shift == shift and vars(policy) == before


def test_the_paper_profile_states_the_hunyuan_shift():
    import gin

    from tvrl_bench.config import load_config

    load_config(["components/profiles/paper.gin"], [])
    try:
        assert gin.query_parameter("training.schedule.shift") == 5.0
    finally:
        gin.clear_config()
