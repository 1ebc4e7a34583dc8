"""Deterministic sampling: the sampler's ODE limit at every step, as evaluations generate their videos, and the
micro-batches every forward is cut into.

Shapes: B prompts; latents x[B, C, T, H, W]; videos[B, F, 3, H, W] in [0, 1].
"""

from __future__ import annotations

from typing import Any

import torch

from tvrl_bench.policies.base import Policy, index_cond
from tvrl_bench.samplers.base import Sampler
from tvrl_bench.training.schedule import Schedule


def chunks(batch: int, size: int) -> list[slice]:
    """Consecutive slices of at most `size` covering range(batch)."""
    return [slice(i, min(i + size, batch)) for i in range(0, batch, size)]


def policy_device(policy: Policy) -> torch.device:
    return next(policy.parameters()).device


@torch.no_grad()
def generate(policy: Policy, sampler: Sampler, schedule: Schedule, prompts: list[str], generator: torch.Generator,
             micro_batch: int) -> torch.Tensor:
    """Deterministic samples for evaluation (the sampler's ODE limit at every step): videos[B, F, 3, H, W] in
    [0, 1], one per prompt."""
    device = policy_device(policy)
    cond = policy.encode(prompts)
    x = torch.randn(len(prompts), *policy.latent_shape(), generator=generator).to(device)  # [B, C, T, H, W]
    x = ode_sample(policy, sampler, schedule, x, cond, micro_batch)
    return torch.cat([policy.decode(x[c]) for c in chunks(len(prompts), micro_batch)])


def ode_sample(policy: Policy, sampler: Sampler, schedule: Schedule, x: torch.Tensor, cond: Any,
               micro_batch: int) -> torch.Tensor:
    """The sampler's ODE limit at every step, from noise x[B, C, T, H, W] to the clean latents x0[B, C, T, H, W];
    velocities in chunks of `micro_batch`. Differentiable where the caller has gradients on (`generate` has not)."""
    sigmas = schedule.sigmas().to(x.device)
    for step in range(schedule.num_steps):
        s, s_next = sigmas[step], sigmas[step + 1]
        # [B, C, T, H, W]
        v = torch.cat([policy.velocity(x[c], s.expand(c.stop - c.start), index_cond(cond, c)) for c in chunks(len(x), micro_batch)])
        x = sampler.ode_step(x, v, s, s_next)
    return x
