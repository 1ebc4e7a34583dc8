"""The velocity anchor: keep the denoising steps that RL does not train where the pretrained policy had them.

RL trains a few transitions (the toy profile: the two noisiest), but the network is shared by every noise level,
so each update also moves the velocity at the deterministic steps that nobody trains. Nothing in the reward's
gradient holds those steps in place, and they are the ones that render backgrounds and edges: on the toy world
most of the damage a trained policy shows comes from them (generating with the trained weights above sigma 0.85
and the pretrained ones below recovers most of it; docs/log/toy_rl_log.md). The anchor adds, per micro-batch of rollouts,

    weight * mean over elements of (v_theta(x_s, sigma_s) - v_ref(x_s, sigma_s))^2

at one untrained step s drawn per micro-batch from the rollout's own states, v_ref being the pretrained policy
(`Policy.reference`). It is zero at the start (ratio and first update unchanged) and grows only with drift.
"""

from __future__ import annotations

from typing import Any

import torch

from tvrl_bench.policies.base import Policy, index_cond
from tvrl_bench.training.ode import chunks
from tvrl_bench.training.step.rollout import Rollout


def untrained_steps(rollout: Rollout) -> list[int]:
    """Denoising steps that no rollout of this batch trains (ascending)."""
    trained = set(rollout.trained.unique().tolist())
    return [s for s in range(rollout.latents.shape[1] - 1) if s not in trained]


def accumulate_anchor_gradient(
    policy: Policy, rollout: Rollout, cond: Any, rows: torch.Tensor, weight: float, micro_batch: int,
    generator: torch.Generator,
) -> float:
    """Backpropagate the anchor over the rollouts `rows` [M]; returns its value (mean over micro-batches).

    Each micro-batch draws one untrained step with `generator`; its loss is scaled by the micro-batch's share of
    `rows`, so the gradient is that of the mean.
    """
    steps = untrained_steps(rollout)
    if not steps:
        return 0.0
    total = 0.0
    for c in chunks(len(rows), micro_batch):
        idx = rows[c]  # [M]
        step = steps[int(torch.randint(len(steps), (1,), generator=generator))]
        x = rollout.latents[idx, step]  # [M, C, T, H, W], the state before that step
        sigma = rollout.sigmas[step].expand(len(idx))  # [M]
        cond_c = index_cond(cond, idx)
        with torch.no_grad(), policy.reference():  # before the policy's forward: the reference swaps weights in place
            v_ref = policy.velocity(x, sigma, cond_c)  # [M, C, T, H, W]
        v = policy.velocity(x, sigma, cond_c)  # [M, C, T, H, W]
        loss = weight * (v - v_ref).square().mean()  # scalar
        fraction = (c.stop - c.start) / len(rows)
        (loss * fraction).backward()
        total += float(loss.detach()) * fraction
    return total
