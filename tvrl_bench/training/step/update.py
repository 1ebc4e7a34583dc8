"""The policy-gradient pass of one step: recompute each trained transition's log-prob with gradients.

For every trained transition j and chunk c of rollouts: v = policy.velocity(x_t) with grad, the sampler's
mean and variance of the step, per-token log-prob of the sampled x_{t-1}, the objective, and backward with
weight |c| / (B * S_train), so the accumulated gradient is that of the mean over (rollout, transition).
With a KL term (`Objective.reference` set) the reference's transition mean is computed first, inside
`reference.context(policy)`. When the rollout kept its trained steps' graphs (`Rollout.graphs`), the minibatch is
the whole batch and there is no KL term, the log-probs with gradients are those graphs instead of a recomputed
forward (one backward per transition); the ratio check then recomputes the first chunk without gradients, so it
still compares two separate forwards.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch

from tvrl_bench.credit.weights import CreditWeights
from tvrl_bench.objectives.base import Objective
from tvrl_bench.objectives.losses import GuardTerms
from tvrl_bench.objectives.reference import Reference
from tvrl_bench.objectives.losses import gaussian_mean_kl
from tvrl_bench.policies.base import Policy, index_cond
from tvrl_bench.samplers.base import Sampler
from tvrl_bench.samplers.noise_blocks import block_log_prob, block_mean, expand_blocks
from tvrl_bench.tokens import latent_to_tokens
from tvrl_bench.training.ode import chunks
from tvrl_bench.training.step.rollout import Rollout


class RatioCheckError(RuntimeError):
    """The recomputed log-probs differ from the rollout's before any update: the ratio is not 1."""


def accumulate_policy_gradient(
    policy: Policy,
    sampler: Sampler,
    objective: Objective,
    rollout: Rollout,
    cond: Any,
    rows: torch.Tensor,
    advantages: torch.Tensor,
    weights: CreditWeights,
    micro_batch: int,
    check_ratio_tolerance: float | None = None,
    balance: torch.Tensor | None = None,
) -> dict[str, float]:
    """Backpropagate the objective over the rollouts `rows` (a minibatch); returns averaged statistics.

    rows[M] indexes the rollout batch; advantages[B] (or [B, K] per check) and weights (B rollouts, in the layout
    the objective's loss takes) as the step collected them.
    check_ratio_tolerance: when not None, the first chunk's recomputed log-probs must equal the rollout's within
    this absolute tolerance (0 = bit-exact) or RatioCheckError is raised before any gradient is used.
    balance: per-step loss factors [S] (Schedule.balance_factors) or None. A positive factor c scales the clipped
    surrogate exactly as it scales the advantage (min(c a, c b) = c min(a, b)), so it is applied to the
    advantage of each (rollout, transition).
    """
    totals: dict[str, float] = defaultdict(float)
    n_rows, n_trained = len(rows), rollout.trained.shape[1]
    reference = objective.reference
    for j in range(n_trained):
        logp_old = rollout.transition(j)[4]  # [B, N]
        # a KL term needs the reference's forward before the policy's, so it cannot use the rollout's kept graph
        kept = kept_log_probs(rollout, j, n_rows) if reference is None else None  # [B, N] with graph, or None
        pending = None  # with a kept graph the chunks share it: one backward for the transition
        for c in chunks(n_rows, micro_batch):
            idx = rows[c]  # [M] rollouts of this chunk
            check = check_ratio_tolerance if j == 0 and c.start == 0 else None
            guard = None
            if kept is None:
                # logp_new [M, N], kl [M, 1] or None
                logp_new, kl, guard = _recomputed(policy, sampler, reference, rollout, cond, j, idx, check,
                                                  objective.needs_old_means)
            else:
                logp_new, kl = kept[idx], None  # [M, N]
                if check is not None:  # a separate forward, so the check still compares two computations
                    with torch.no_grad():
                        _recomputed(policy, sampler, reference, rollout, cond, j, idx, check)
            chunk_advantages = advantages[idx]  # [M] (or [M, K] per check)
            if balance is not None:
                factor = balance.to(chunk_advantages.device)[rollout.trained[idx, j]]  # [M]
                chunk_advantages = chunk_advantages * factor.reshape(-1, *[1] * (chunk_advantages.dim() - 1))
            extra = {} if guard is None else {"guard": guard}
            # one transition: logp [M, 1, N]; loss is a scalar
            loss, stats = objective.loss(logp_new[:, None], logp_old[idx][:, None], chunk_advantages, weights[idx], kl,
                                         **extra)
            share = (c.stop - c.start) / (n_rows * n_trained)
            if kept is None:
                (loss * share).backward()
            else:
                pending = loss * share if pending is None else pending + loss * share
            totals["loss"] += float(loss.detach()) * share
            for name, value in stats.items():
                totals[name] += float(value) * share
        if pending is not None:
            pending.backward()
    return dict(totals)


def kept_log_probs(rollout: Rollout, j: int, n_rows: int) -> torch.Tensor | None:
    """The rollout's kept log-probs with graph [B, N] of trained transition j, when the update covers every rollout
    and they all train the same step; None when the transition must be recomputed."""
    if not rollout.graphs or n_rows != rollout.latents.shape[0]:
        return None
    steps = rollout.trained[:, j]  # [B]
    step = int(steps[0])
    if step not in rollout.graphs or not bool((steps == step).all()):
        return None
    return rollout.graphs.pop(step)  # a graph is backpropagated once


def _recomputed(policy: Policy, sampler: Sampler, reference: Reference | None, rollout: Rollout, cond: Any, j: int,
                idx: torch.Tensor, check_ratio_tolerance: float | None,
                guarded: bool = False) -> tuple[torch.Tensor, torch.Tensor | None, GuardTerms | None]:
    """Trained transition j's per-token log-probs [M, N] for rollouts idx[M], recomputed with gradients, the
    KL term [M, 1] to the objective's reference (None without one) and, when `guarded`, the transition's mean shift
    against the rollout's kept sampling-time mean (GuardTerms [M, 1, N]; None otherwise)."""
    # x, x_next [B, C, T, H, W], sigmas [B], logp_old [B, N]
    x, x_next, sigma, sigma_next, logp_old = rollout.transition(j)
    mean_ref = None
    if reference is not None:  # before the policy's forward: a reference that swaps weights in place must not
        # touch tensors the policy's graph has saved
        with torch.no_grad(), reference.context(policy):
            v_ref = policy.velocity(x[idx], sigma[idx], index_cond(cond, idx))  # [M, C, T, H, W]
            mean_ref, _ = sampler.transition(x[idx], v_ref, sigma[idx], sigma_next[idx])  # [M, C, T, H, W]
    v = policy.velocity(x[idx], sigma[idx], index_cond(cond, idx))  # [M, C, T, H, W]
    mean, var = sampler.transition(x[idx], v, sigma[idx], sigma_next[idx])  # mean [M, C, T, H, W], var broadcastable
    # [M, N]
    logp_new = latent_to_tokens(block_log_prob(sampler, x_next[idx], mean, var, rollout.noise_block), policy.token_grid)
    if check_ratio_tolerance is not None:
        check_ratio(logp_new.detach(), logp_old[idx], check_ratio_tolerance)
    block = rollout.noise_block
    # [M, 1]
    kl = None if mean_ref is None else gaussian_mean_kl(block_mean(mean, block), block_mean(mean_ref, block), var)[:, None]
    return logp_new, kl, guard_terms(rollout, j, idx, mean, var, policy) if guarded else None


def guard_terms(rollout: Rollout, j: int, idx: torch.Tensor, mean: torch.Tensor, var: torch.Tensor,
                policy: Policy) -> GuardTerms:
    """GuardTerms [M, 1, N] of trained transition j: per token, the mean of (mu - mu_sampled)^2 (block means, as
    the log-prob sees them) and sqrt(Var)."""
    if rollout.means is None:
        raise ValueError("the objective needs the sampling-time transition means, but the rollout kept none")
    block = rollout.noise_block
    old = rollout.means[idx, rollout.trained[idx, j]]  # [M, C, T, H, W]
    # [M, C, T, H, W]
    shift = expand_blocks((block_mean(mean.float(), block) - block_mean(old.float(), block)) ** 2, block)
    std = torch.sqrt(var.float()).expand_as(shift)  # [M, C, T, H, W]
    return GuardTerms(latent_to_tokens(shift, policy.token_grid)[:, None],
                      latent_to_tokens(std, policy.token_grid)[:, None])


def check_ratio(logp_new: torch.Tensor, logp_old: torch.Tensor, tolerance: float) -> None:
    """Raise RatioCheckError unless |logp_new - logp_old| <= tolerance everywhere (tolerance 0: exactly equal)."""
    diff = float((logp_new - logp_old).abs().max())
    if diff > tolerance or not torch.isfinite(logp_new).all():
        raise RatioCheckError(
            f"before the first update the policy ratio must be exactly 1, but the recomputed per-token log-probs differ "
            f"from the rollout's by up to {diff:.3g} (tolerance {tolerance}). The policy is not deterministic between "
            "sampling and training: check for dropout or train-mode layers, a different micro-batch split, or "
            "non-deterministic kernels; on hardware whose kernels differ with gradients enabled, raise "
            "training.trial.ratio_tolerance."
        )
