"""A zero-variance transition can never be trained: asking for its log-prob is a clear error."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.samplers import ZeroVarianceError
from tvrl_bench.samplers.cps import CpsSampler
from tvrl_bench.samplers.dance import DanceSampler
from tvrl_bench.samplers.ode import OdeSampler
from tvrl_bench.training.schedule import Schedule


def test_ode_log_prob_raises():
    x, v = torch.randn(1, 3, 2, 2, 2), torch.randn(1, 3, 2, 2, 2)
    x_next, mean, var = OdeSampler().step(x, v, 0.5, 0.4)
    with pytest.raises(ZeroVarianceError, match="never trained"):
        OdeSampler().log_prob(x_next, mean, var)


def test_cps_last_step_to_zero_has_zero_variance():
    x, v = torch.randn(1, 3, 2, 2, 2), torch.randn(1, 3, 2, 2, 2)
    x_next, mean, var = CpsSampler().step(x, v, 0.2, 0.0)
    with pytest.raises(ZeroVarianceError):
        CpsSampler().log_prob(x_next, mean, var)


def test_schedule_refuses_to_train_a_sampler_without_noise():
    with pytest.raises(ZeroVarianceError, match="step 0 .*cannot be trained"):
        Schedule(num_steps=4).validate(OdeSampler())
    with pytest.raises(ZeroVarianceError):
        Schedule(num_steps=4).validate(DanceSampler(eta=0.0))
    Schedule(num_steps=4).validate(CpsSampler())  # the last (ODE) step is never a trained step


def test_schedule_window_may_not_contain_the_final_ode_step():
    with pytest.raises(ValueError, match="sde_window = .*last step"):
        Schedule(num_steps=6, sde_window=(3, 3))
