"""Each sampler's mean, variance and log-prob against the reference formulas, recomputed here in float64."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate
from scipy.stats import norm

from tvrl_bench.samplers.cps import CpsSampler
from tvrl_bench.samplers.dance import DanceSampler
from tvrl_bench.samplers.flow import FlowSampler
from tvrl_bench.samplers.ode import OdeSampler
from tvrl_bench.samplers.sage import SageSampler

LEVELS = [(1.0, 0.9), (0.8, 0.7), (0.5, 0.45), (0.2, 0.0), (0.999, 0.95)]


def reference_flow(x, v, s, s_next, a):
    """Flow-GRPO's sde_step_with_logprob (sde_type='sde'), written out."""
    dt = s_next - s
    std = math.sqrt(s / (1 - (s_next if s == 1 else s))) * a
    mean = x * (1 + std**2 / (2 * s) * dt) + v * (1 + std**2 * (1 - s) / (2 * s)) * dt
    return mean, std**2 * -dt


def reference_dance(x, v, s, s_next, eta):
    """DanceGRPO's flux_step with the SDE correction, written out."""
    dsigma = s_next - s
    x0 = x - s * v
    score = -(x - x0 * (1 - s)) / s**2
    mean = x + dsigma * v + (-0.5 * eta**2 * score) * dsigma
    return mean, eta**2 * (s - s_next)


def reference_sage(x, v, s, s_next, eta):
    """SAGE-GRPO's sde step (sde_solver=True), written out."""
    s_clamped = min(s, 1 - 3e-3)
    var = eta**2 * (-(s - s_next) + math.log((1 - s_next) / (1 - s_clamped)))
    x0 = x - s * v
    score = -(x - x0 * (1 - s)) / s**2
    return x + (s_next - s) * v + 0.5 * var * score, var


def reference_cps(x, v, s, s_next, a):
    """Flow-GRPO's sde_type='cps' step, written out."""
    std = s_next * math.sin(a * math.pi / 2)
    x0 = x - s * v
    x1 = x + v * (1 - s)
    return x0 * (1 - s_next) + x1 * math.sqrt(s_next**2 - std**2), std**2


CASES = [
    (FlowSampler(a=0.7), lambda x, v, s, n: reference_flow(x, v, s, n, 0.7)),
    (DanceSampler(eta=0.3), lambda x, v, s, n: reference_dance(x, v, s, n, 0.3)),
    (SageSampler(eta=0.5), lambda x, v, s, n: reference_sage(x, v, s, n, 0.5)),
    (CpsSampler(a=0.8), lambda x, v, s, n: reference_cps(x, v, s, n, 0.8)),
]


# CPS has zero variance at s' = 0 (tested in test_zero_variance.py), so its grid stops short of 0.
GRID = [
    pytest.param(sampler, reference, s, s_next, id=f"{name}-{s}-{s_next}")
    for (sampler, reference), name in zip(CASES, ["flow", "dance", "sage", "cps"])
    for s, s_next in LEVELS
    if not (name == "cps" and s_next == 0.0)
]


@pytest.mark.parametrize("sampler,reference,s,s_next", GRID)
def test_mean_variance_log_prob_match_reference(sampler, reference, s, s_next):
    s, s_next = torch.tensor(s), torch.tensor(s_next)  # float32 levels, as a schedule gives them
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 2, 4, 4, generator=gen)
    v = torch.randn(2, 3, 2, 4, 4, generator=gen)
    noise = torch.randn(2, 3, 2, 4, 4, generator=gen)

    x_next, mean, var = sampler.step(x, v, s, s_next, noise=noise)
    logp = sampler.log_prob(x_next, mean, var)
    s, s_next = float(s), float(s_next)

    ref_mean, ref_var = reference(x.double().numpy(), v.double().numpy(), s, s_next)
    ref_next = ref_mean + math.sqrt(ref_var) * noise.double().numpy()
    ref_logp = norm.logpdf(x_next.double().numpy(), loc=ref_mean, scale=math.sqrt(ref_var))

    assert float(var.max()) == pytest.approx(ref_var, rel=1e-6, abs=1e-9)
    np.testing.assert_allclose(mean.double().numpy(), ref_mean, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(x_next.double().numpy(), ref_next, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(logp.double().numpy(), ref_logp, rtol=1e-5, atol=1e-5 * max(1.0, abs(ref_logp).max()))
    assert logp.dtype == torch.float32 and logp.shape == x.shape


def test_sage_variance_is_the_integral_of_flows_schedule():
    eta = 0.5
    sage = SageSampler(eta=eta)
    for s, s_next in [(0.9, 0.8), (0.6, 0.3), (0.31, 0.3), (0.99, 0.5), (0.1, 0.0)]:
        numeric, _ = integrate.quad(lambda u: eta**2 * u / (1 - u), s_next, s)
        var = float(sage.variance(torch.tensor(s), torch.tensor(s_next)))
        assert var == pytest.approx(numeric, rel=1e-5)


def test_recomputed_log_prob_of_a_sampled_step_gives_ratio_exactly_one():
    gen = torch.Generator().manual_seed(1)
    x, v = torch.randn(4, 3, 2, 4, 4, generator=gen), torch.randn(4, 3, 2, 4, 4, generator=gen)
    for sampler in (FlowSampler(), DanceSampler(), SageSampler(), CpsSampler()):
        x_next, mean, var = sampler.step(x, v, 0.7, 0.6, generator=torch.Generator().manual_seed(2))
        old = sampler.log_prob(x_next, mean, var)
        _, mean_again, var_again = sampler.step(x, v.clone(), 0.7, 0.6, noise=torch.zeros_like(x))
        new = sampler.log_prob(x_next, mean_again, var_again)
        assert torch.equal(torch.exp(new.mean() - old.mean()), torch.tensor(1.0))


def test_per_sample_levels_equal_separate_steps():
    gen = torch.Generator().manual_seed(3)
    x, v, noise = (torch.randn(3, 2, 2, 4, 4, generator=gen) for _ in range(3))
    sigma, sigma_next = torch.tensor([1.0, 0.6, 0.3]), torch.tensor([0.9, 0.5, 0.1])
    for sampler in (FlowSampler(), SageSampler(), CpsSampler(), DanceSampler()):
        batched, mean_b, var_b = sampler.step(x, v, sigma, sigma_next, noise=noise)
        for i in range(3):
            single, mean_1, var_1 = sampler.step(x[i : i + 1], v[i : i + 1], float(sigma[i]), float(sigma_next[i]), noise=noise[i : i + 1])
            torch.testing.assert_close(batched[i : i + 1], single)
            torch.testing.assert_close(var_b[i].reshape(()), var_1.reshape(()))


def test_ode_step_is_euler_and_deterministic():
    x, v = torch.randn(2, 3, 2, 4, 4), torch.randn(2, 3, 2, 4, 4)
    x_next, mean, var = OdeSampler().step(x, v, 0.5, 0.25)
    torch.testing.assert_close(x_next, x + v * (0.25 - 0.5))
    assert float(var.abs().max()) == 0.0


@pytest.mark.parametrize("sampler", [SageSampler(), FlowSampler(), DanceSampler(), OdeSampler()], ids=lambda s: type(s).__name__)
def test_every_samplers_ode_step_is_the_zero_variance_step_exactly(sampler):
    """Rollouts take `sampler.ode_step` on untrained steps and evaluation at every step: it must be the ODE
    sampler's step bit for bit (a checkpoint's samples would otherwise change with the refactoring of a sampler)."""
    x, v = torch.randn(2, 3, 2, 4, 4), torch.randn(2, 3, 2, 4, 4)
    for s, s_next in [(1.0, 0.9), (0.5, 0.25), (torch.tensor(0.3), torch.tensor(0.0))]:
        expected, _, _ = OdeSampler().step(x, v, s, s_next)
        assert torch.equal(sampler.ode_step(x, v, s, s_next), expected)
