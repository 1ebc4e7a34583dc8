"""Rollouts: sample videos with the SDE sampler and keep what training needs, old per-token log-probs included.

Shapes: B rollouts; latents x[B, C, T, H, W]; S = schedule.num_steps; N tokens per rollout.
The old log-probs are computed once, during sampling, from the same velocities that produced the samples; they
are never recomputed. With `keep_graph` the trained steps' log-probs also keep the policy's autograd graph, so a
step that makes a single update backpropagates through the rollout's own forward instead of recomputing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from tvrl_bench.policies.base import Policy, index_cond
from tvrl_bench.samplers.base import Sampler
from tvrl_bench.samplers.noise_blocks import ELEMENT, Block, block_log_prob, block_noise, check_block
from tvrl_bench.training.schedule import Schedule
from tvrl_bench.tokens import latent_to_tokens
from tvrl_bench.training.ode import chunks, policy_device


@dataclass
class Rollout:
    """One batch of sampled trajectories.

    latents: [B, S + 1, C, T, H, W], the state before each step and the final sample (float32).
    log_probs: [B, S, N] per-token log-prob of each step's sampled transition (zeros on ODE steps).
    sigmas: [S + 1] noise levels.
    trained: [B, S_train] step indices whose transitions are trained.
    noise_block: latent positions (frames, rows, columns) that share one noise value (samplers/noise_blocks.py).
    graphs: {step: per-token log-probs [B, N] of that trained step with the policy's autograd graph}, when sampled
    with keep_graph (every rollout then trains the same steps); empty otherwise.
    means: [B, S, C, T, H, W] each step's transition mean at sampling time (the next state on ODE steps), when
    sampled with keep_means (objectives that compare against it, Objective.needs_old_means); None otherwise.
    """

    latents: torch.Tensor
    log_probs: torch.Tensor
    sigmas: torch.Tensor
    trained: torch.Tensor
    noise_block: Block = ELEMENT
    graphs: dict[int, torch.Tensor] = field(default_factory=dict)
    means: torch.Tensor | None = None

    @property
    def final(self) -> torch.Tensor:
        """The clean samples x0[B, C, T, H, W]."""
        return self.latents[:, -1]

    def transition(self, j: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """The j-th trained transition of every rollout: (x[B,...], x_next[B,...], sigma[B], sigma_next[B], logp_old[B, N])."""
        steps = self.trained[:, j]
        rows = torch.arange(self.latents.shape[0])
        return (
            self.latents[rows, steps],
            self.latents[rows, steps + 1],
            self.sigmas[steps],
            self.sigmas[steps + 1],
            self.log_probs[rows, steps],
        )


@torch.no_grad()
def sample_rollouts(
    policy: Policy,
    sampler: Sampler,
    schedule: Schedule,
    cond: Any,
    batch: int,
    generator: torch.Generator,
    micro_batch: int,
    group_size: int = 1,
    keep_graph: bool = False,
    keep_means: bool = False,
    updates: int = 0,
) -> Rollout:
    """Sample `batch` trajectories (SDE on the schedule's stochastic steps, ODE elsewhere).

    The velocity is computed in chunks of `micro_batch` rollouts; training recomputes it with the same chunks so
    the first policy ratio is exactly 1. Rollouts come in consecutive groups of `group_size` (one prompt each);
    with `schedule.shared_start` the rollouts of a group start from the same initial noise.
    keep_graph: run the trained steps with gradients and keep their log-probs' graphs in `Rollout.graphs` (the
    schedule must not shuffle, so every rollout trains the same steps); the samples are the same either way.
    keep_means: keep every step's transition mean in `Rollout.means`.
    updates: optimizer updates done so far, which place a moving SDE window (`Schedule.window_shift_every`).
    """
    if keep_graph and schedule.shuffle:
        raise ValueError("keeping the rollout's graph needs every rollout to train the same steps: "
                         "training.schedule.shuffle must be False")
    device = policy_device(policy)
    sigmas = schedule.sigmas().to(device)  # [S + 1]
    stochastic = set(schedule.stochastic_steps(updates))
    # x_1 [B, C, T, H, W]
    x = initial_noise(batch, tuple(policy.latent_shape()), group_size if schedule.shared_start else 1, generator).to(device)
    block = check_block(schedule.noise_block, tuple(x.shape))
    keep = set(schedule.trained_steps(1, updates=updates)[0].tolist()) if keep_graph else set()  # unshuffled: the same for all
    states = [x]
    log_probs = []
    means = []
    graphs = {}
    for step in range(schedule.num_steps):
        s, s_next = sigmas[step], sigmas[step + 1]
        with torch.set_grad_enabled(step in keep):
            # [B, C, T, H, W]
            v = torch.cat([policy.velocity(x[c], s.expand(c.stop - c.start), index_cond(cond, c)) for c in chunks(batch, micro_batch)])
            if step in stochastic:
                noise = block_noise(tuple(x.shape), block, generator).to(device)  # [B, C, T, H, W]
                x_next, mean, var = sampler.step(x, v, s, s_next, noise=noise)  # [B, C, T, H, W]; var broadcastable
                x_next = x_next.detach()  # the sample is data for the later steps; only its log-prob keeps the graph
                logp = latent_to_tokens(block_log_prob(sampler, x_next, mean, var, block), policy.token_grid)  # [B, N]
            else:
                x_next = mean = sampler.ode_step(x, v, s, s_next)  # [B, C, T, H, W]
                logp = torch.zeros(batch, _num_tokens(x, policy), device=device)  # [B, N]
            if keep_means:
                means.append(mean.detach())
        if step in keep:
            graphs[step] = logp
            logp = logp.detach()
        states.append(x_next)
        log_probs.append(logp)
        x = x_next
    return Rollout(
        latents=torch.stack(states, dim=1),  # [B, S + 1, C, T, H, W]
        log_probs=torch.stack(log_probs, dim=1),  # [B, S, N]
        sigmas=sigmas,
        trained=schedule.trained_steps(batch, generator, updates).to(device),  # [B, S_train]
        noise_block=block,
        graphs=graphs,
        means=torch.stack(means, dim=1) if keep_means else None,  # [B, S, C, T, H, W]
    )


@dataclass
class Sampled:
    """B rollouts as the training step samples them: cond (the policy's encoding of their prompts), the rollout, and
    videos[B, F, 3, H, W] (the decoded final samples, in [0, 1])."""

    cond: Any
    rollout: Rollout
    videos: torch.Tensor


def roll_out(policy: Policy, sampler: Sampler, schedule: Schedule, prompts: list[str], noise: torch.Generator,
             micro_batch: int, group_size: int = 1, keep_graph: bool = False, keep_means: bool = False,
             updates: int = 0) -> Sampled:
    """Encode `prompts` (B, consecutive groups of `group_size` sharing a prompt), sample their rollouts from `noise`
    (`sample_rollouts`, whose arguments these are) and decode the final samples, `micro_batch` at a time: the one
    place rollouts are sampled, for the training step and for every tool that samples as it does."""
    cond = policy.encode(prompts)
    rollout = sample_rollouts(policy, sampler, schedule, cond, len(prompts), noise, micro_batch, group_size,
                              keep_graph, keep_means=keep_means, updates=updates)
    with torch.no_grad():
        videos = torch.cat([policy.decode(rollout.final[c]) for c in chunks(len(prompts), micro_batch)])
    return Sampled(cond, rollout, videos)


def initial_noise(batch: int, latent_shape: tuple[int, ...], group_size: int, generator: torch.Generator) -> torch.Tensor:
    """x_1[B, C, T, H, W]: one standard normal draw per consecutive group of `group_size` rollouts, repeated."""
    if batch % group_size:
        raise ValueError(f"{batch} rollouts do not split into groups of {group_size}")
    return torch.randn(batch // group_size, *latent_shape, generator=generator).repeat_interleave(group_size, dim=0)


def _num_tokens(x: torch.Tensor, policy: Policy) -> int:
    t, h, w = policy.token_grid.grid_from_latent(x.shape)
    return t * h * w
