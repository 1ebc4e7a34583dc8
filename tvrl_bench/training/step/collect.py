"""Collecting one step before any update: roll out the step's prompts, decode, score with the critic, and turn
the rewards into advantages and the critic's gradients into credit maps (no gradient reaches the policy)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from tvrl_bench.credit.weights import CreditWeights, route
from tvrl_bench.objectives.base import TRANSITIONS
from tvrl_bench.objectives.step_rewards import StepRewards
from tvrl_bench.policies.base import Policy
from tvrl_bench.prompts import PromptItem
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.step.rollout import Rollout, roll_out
from tvrl_bench.training.scoring import Scores, score_videos
from tvrl_bench.training.seeding import generator
from tvrl_bench.training.settings import TrialSettings


class TrialFailed(RuntimeError):
    """The trial cannot go on (a non-finite reward, loss or gradient); its checkpoint is kept."""


@dataclass
class StepBatch:
    """What one step collects before any update: B = this process's rollouts.

    prompts[B], checks[B], cond (the policy's encoding), rollout, video[B, F, 3, H, W], scored (scores[B, K], mask,
    grads), all_rewards[B_all] and all_groups[B_all] (every process; rollouts of a prompt share a group id),
    all_advantages[B_all] or [B_all, K] and advantages[B] or [B, K] (this process's) as the objective's loss uses
    them, weights (the credit in the layout the loss takes; weights.merged[B, T', H', W'] is the map the step logs),
    step (the optimizer step it was collected for), all_critic_rewards ({name: R_j[B_all]} of each critic of a
    reward made of several, every process's; {} otherwise), updates (optimizer updates done before this step: they
    place a moving SDE window, `Schedule.window_start`).
    """

    prompts: list[str]
    checks: list[list[str]]
    cond: Any
    rollout: Rollout
    video: torch.Tensor
    scored: Scores
    all_rewards: torch.Tensor
    all_groups: torch.Tensor
    all_advantages: torch.Tensor
    advantages: torch.Tensor
    weights: CreditWeights
    step: int = 0
    all_critic_rewards: dict[str, torch.Tensor] = field(default_factory=dict)
    updates: int = 0


def keeps_rollout_graph(s: TrialSettings, sharded: bool) -> bool:
    """Whether the rollout keeps its trained steps' graphs for the update (TrialSettings.keep_rollout_graph, where
    it applies: one update per step, no KL reference, every rollout training the same steps, an unsharded policy, an
    objective that trains on the transitions' log-probs alone)."""
    return (s.keep_rollout_graph and s.minibatches == 1 and s.objective.reference is None and not s.schedule.shuffle
            and not sharded and s.objective.update == TRANSITIONS and not s.objective.needs_old_means)


def collect_batch(s: TrialSettings, policy: Policy, processes: Processes, items: list[PromptItem],
                  group_ids: torch.Tensor, micro_batch: int, step: int, keep_graph: bool = False) -> StepBatch:
    """Roll out `items` (this process's prompts, global group ids[P]) group_size times each and score them;
    keep_graph: the rollout keeps its trained steps' graphs (see `keeps_rollout_graph`)."""
    device = processes.device
    prompts = [it.prompt for it in items for _ in range(s.group_size)]
    checks = [list(it.checks) for it in items for _ in range(s.group_size)]
    groups = group_ids.repeat_interleave(s.group_size)  # [B]
    updates = step * s.minibatches  # every step before this one made `minibatches` optimizer updates (Trainer.step)
    sampled = roll_out(policy, s.sampler, s.schedule, prompts, generator(s.seed, "rollout", step, processes.rank),
                       micro_batch, s.group_size, keep_graph, keep_means=s.objective.needs_old_means, updates=updates)
    cond, rollout, video = sampled.cond, sampled.rollout, sampled.videos  # video[B, F, 3, H, W]
    scored = score_videos(s.reward, video, prompts, checks, need_grads=s.credit.needs_grads, space=s.credit.grad_space)
    all_rewards = processes.gather(scored.rewards().to(torch.float32).to(device))  # [B_all]
    if not torch.isfinite(all_rewards).all():
        raise TrialFailed(f"step {step}: the critic returned a non-finite reward ({all_rewards.tolist()})")
    all_groups = processes.gather(groups.to(device)).cpu()  # [B_all]
    # {critic: R_j[B_all]}
    by_critic = {name: processes.gather(r.to(torch.float32).to(device)).cpu() for name, r in scored.by_critic.items()}
    # [B_all]
    all_advantages = s.reward.group_advantages(all_rewards.cpu(), by_critic, all_groups, s.advantage_std,
                                               s.advantage_eps, s.advantage_clip)

    def every_check() -> tuple[torch.Tensor, torch.Tensor]:
        # scores [B_all, K], mask [B_all, K]
        return (processes.gather(scored.scores.to(torch.float32).to(device)).cpu(),
                processes.gather(scored.mask.to(device)).cpu())

    # [B_all], or [B_all, K] per check
    all_advantages = s.objective.advantages(
        StepRewards(all_advantages, all_groups, generator(s.seed, "advantages", step), every_check))
    mine = slice(processes.rank * len(prompts), (processes.rank + 1) * len(prompts))  # this process's B of B_all
    weights = route(s.credit, scored.grads, video, policy.token_grid, scored.mask, s.objective.credit_layout, device,
                    checks)
    return StepBatch(prompts, checks, cond, rollout, video, scored, all_rewards, all_groups,
                     all_advantages, all_advantages[mine].to(device), weights, step, by_critic, updates)
