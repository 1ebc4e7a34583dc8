"""Per-timestep gradient balancing (SAGE-GRPO; the official TVRL code does the same).

A trained transition's log-prob gradient with respect to the velocity scales like g_t = |d mu / d v| / sigma_t,
where mu is the step's mean and sigma_t = sqrt(Var_t) its noise standard deviation: the derivative of
log N(x'; mu, Var) is (x' - mu) / Var * d mu / d v, and x' - mu is of the size sigma_t. Low-noise transitions
therefore dominate the policy gradient, although the early, high-noise ones decide most of the reward. Balancing
multiplies each transition's loss by median_t(g) / g_t, so every trained step contributes a gradient of one size.

Every sampler's mean is affine in v, so d mu / d v is the mean at (x = 0, v = 1) minus the mean at (x = 0, v = 0).
"""

from __future__ import annotations

import torch

from tvrl_bench.samplers.base import Sampler


def velocity_gain(sampler: Sampler, sigma: torch.Tensor, sigma_next: torch.Tensor) -> torch.Tensor:
    """g[S] = |d mu / d v| / sqrt(Var) for each step's levels sigma[S] -> sigma_next[S] (float32)."""
    ones, zeros = torch.ones(len(sigma), 1), torch.zeros(len(sigma), 1)
    mean_one, var = sampler.transition(zeros, ones, sigma, sigma_next)
    mean_zero, _ = sampler.transition(zeros, zeros, sigma, sigma_next)
    var = torch.as_tensor(var, dtype=torch.float32).reshape(-1)
    return ((mean_one - mean_zero).reshape(-1).abs() / var.sqrt()).to(torch.float32)


def balance_factors(sampler: Sampler, sigmas: torch.Tensor, steps: list[int]) -> torch.Tensor:
    """factors[len(sigmas) - 1]: median_t(g) / g_t on the given stochastic steps, 0 on every other step.

    sigmas[S + 1] are the schedule's levels; `steps` the indices of the steps that may be trained (their
    variance must be positive).
    """
    index = torch.tensor(steps, dtype=torch.long)
    gain = velocity_gain(sampler, sigmas[index], sigmas[index + 1])
    factors = torch.zeros(len(sigmas) - 1)
    factors[index] = gain.median() / gain
    return factors
