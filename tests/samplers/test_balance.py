"""Per-timestep gradient balancing: factors against the closed form of each sampler's d mu / d v."""

from __future__ import annotations

import math

import pytest
import torch

from tvrl_bench.samplers.balance import balance_factors, velocity_gain
from tvrl_bench.samplers.cps import CpsSampler
from tvrl_bench.samplers.dance import DanceSampler
from tvrl_bench.samplers.flow import FlowSampler
from tvrl_bench.samplers.sage import SageSampler
from tvrl_bench.training.schedule import Schedule


def shared_drift_gain(s: float, s_next: float, var: float) -> float:
    """|d mu / d v| / sqrt(Var) for mu = x + v dt - Var / (2 s) (x + (1 - s) v), written out by hand."""
    return abs((s_next - s) - var * (1 - s) / (2 * s)) / math.sqrt(var)


def cps_gain(s: float, s_next: float, var: float) -> float:
    """CPS: mu = (1 - s') (x - s v) + sqrt(s'^2 - Var) (x + (1 - s) v), so d mu / d v = -(1 - s') s + sqrt(s'^2 - Var)(1 - s)."""
    return abs(-(1 - s_next) * s + math.sqrt(s_next**2 - var) * (1 - s)) / math.sqrt(var)


@pytest.mark.parametrize("sampler", [FlowSampler(), DanceSampler(), SageSampler(eta=0.5)], ids=["flow", "dance", "sage"])
def test_factors_equal_median_over_gain_of_the_shared_drift(sampler):
    schedule = Schedule(num_steps=10, shift=3.0, balance=True)
    sigmas = schedule.sigmas().double()
    steps = schedule.stochastic_steps()
    gains = []
    for t in steps:
        s, s_next = float(sigmas[t]), float(sigmas[t + 1])
        var = float(sampler.variance(torch.tensor(s), torch.tensor(s_next)))
        gains.append(shared_drift_gain(s, s_next, var))
    median = sorted(gains)[(len(gains) - 1) // 2]  # torch.median takes the lower middle value
    expected = [median / g for g in gains]
    factors = schedule.balance_factors(sampler)
    assert factors.shape == (10,) and float(factors[-1]) == 0.0  # the last (ODE) step is never trained
    assert factors[steps].tolist() == pytest.approx(expected, rel=1e-4)
    # the high-noise steps, whose log-prob gradients are smallest, are scaled up the most
    assert float(factors[0]) > 1 > float(factors[steps[-1]])


def test_cps_uses_its_own_mean():
    sampler = CpsSampler()
    sigmas = torch.tensor([1.0, 0.75, 0.5, 0.25])
    gain = velocity_gain(sampler, sigmas[1:3], sigmas[2:4])
    expected = []
    for s, s_next in ((0.75, 0.5), (0.5, 0.25)):
        var = float(sampler.variance(torch.tensor(s), torch.tensor(s_next)))
        expected.append(cps_gain(s, s_next, var))
    assert gain.tolist() == pytest.approx(expected, rel=1e-4)


def test_balancing_is_off_by_default_and_only_on_requested_steps():
    assert Schedule(num_steps=6).balance_factors(SageSampler()) is None
    factors = balance_factors(SageSampler(), Schedule(num_steps=6).sigmas(), [1, 2, 3])
    assert factors[0] == 0 and factors[4] == 0 and factors[5] == 0 and bool((factors[1:4] > 0).all())
    assert float(factors[1:4].median()) == pytest.approx(1.0)
