"""The flow-matching pass of one step, for objectives that train on the rollouts' clean samples
(objectives/matching.py): no transition log-probs, the policy's velocity at freshly noised clean samples instead.

For each of the objective's `timesteps` draws, every training unit (a rollout; for DPO a (best, worst) pair) gets
one noise level from the objective's `levels` of the trajectory and one noise draw (shared by a pair; the
objective's `draws` may share one among a group's units):
x = (1 - sigma) x0 + sigma noise, target u = noise - x0. Per chunk of units: the old policy's and the reference's
velocities first, without gradients (inside their contexts, which may swap weights in place), then the policy's with
gradients, the objective's `matching_loss`, and backward with weight |chunk| / (U * timesteps), so the accumulated
gradient is that of the mean over (unit, draw).
"""

from __future__ import annotations

from collections import defaultdict
from functools import partial
from typing import Any

import torch

from tvrl_bench.credit.weights import CreditWeights
from tvrl_bench.objectives.matching import MatchingObjective, MatchingTerms
from tvrl_bench.objectives.reference import Reference
from tvrl_bench.policies.base import Policy, index_cond
from tvrl_bench.tokens import latent_to_tokens
from tvrl_bench.training.ode import chunks
from tvrl_bench.training.step.rollout import Rollout


def accumulate_matching_gradient(
    policy: Policy,
    objective: MatchingObjective,
    rollout: Rollout,
    cond: Any,
    rows: torch.Tensor,
    groups: torch.Tensor,
    advantages: torch.Tensor,
    weights: CreditWeights,
    micro_batch: int,
    generator: torch.Generator,
) -> dict[str, float]:
    """Backpropagate the matching objective over the minibatch rows[M]; returns averaged statistics.

    groups[B], advantages[B] and weights (B rollouts) as the step collected them (this process's rollouts).
    A minibatch with no training unit (DPO: no group with differing rewards) contributes no gradient.
    """
    units = objective.units(rows, advantages[rows].cpu(), groups[rows].cpu())  # [U, size] rollout indices
    n_units, size = units.shape
    levels = objective.levels(rollout.sigmas.cpu())  # [L] noise levels to draw from
    x0_all = rollout.final  # [B, C, T, H, W]
    to_tokens = partial(latent_to_tokens, grid=policy.token_grid)
    totals: dict[str, float] = defaultdict(float)
    if n_units == 0:
        return {"loss": 0.0, "matching_units": 0.0}
    per_chunk = max(1, micro_batch // size)
    draw_of_unit = objective.draws(groups[units[:, 0]].cpu())  # [U]: the noise draw each unit takes
    n_draws = int(draw_of_unit.max()) + 1
    for _ in range(objective.timesteps):
        sigma_units = levels[torch.randint(len(levels), (n_draws,), generator=generator)][draw_of_unit]  # [U]
        noise_units = torch.randn(n_draws, *x0_all.shape[1:], generator=generator)[draw_of_unit]  # [U, C, T, H, W]
        for c in chunks(n_units, per_chunk):
            idx = units[c].reshape(-1).to(x0_all.device)  # [M] = chunk units x size
            sigma = sigma_units[c].repeat_interleave(size).to(x0_all)  # [M]
            noise = noise_units[c].repeat_interleave(size, dim=0).to(x0_all)  # [M, C, T, H, W]
            x0 = x0_all[idx]  # [M, C, T, H, W]
            s = sigma.reshape(-1, *[1] * (x0.dim() - 1))  # [M, 1, 1, 1, 1]
            x = (1 - s) * x0 + s * noise  # [M, C, T, H, W], noised at sigma
            chunk_cond = index_cond(cond, idx)
            v_old = _frozen_velocity(policy, objective.old, x, sigma, chunk_cond)
            v_ref = _frozen_velocity(policy, objective.reference, x, sigma, chunk_cond)
            v = policy.velocity(x, sigma, chunk_cond)  # [M, C, T, H, W]
            terms = MatchingTerms(v, v.detach() if v_old is None else v_old, v_ref, noise - x0, sigma, to_tokens)
            loss, stats = objective.matching_loss(terms, advantages[idx], weights[idx])
            share = (c.stop - c.start) / (n_units * objective.timesteps)
            (loss * share).backward()
            totals["loss"] += float(loss.detach()) * share
            for name, value in stats.items():
                totals[name] += float(value) * share
    totals["matching_units"] = float(n_units)
    return dict(totals)


def _frozen_velocity(policy: Policy, copy: Reference | None, x: torch.Tensor, sigma: torch.Tensor,
                     cond: Any) -> torch.Tensor | None:
    """The velocity [M, C, T, H, W] of a frozen copy of the policy (within its context), None without one."""
    if copy is None:
        return None
    with torch.no_grad(), copy.context(policy):
        return policy.velocity(x, sigma, cond)
