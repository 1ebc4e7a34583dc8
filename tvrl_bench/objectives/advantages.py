"""Group-relative advantages (GRPO): each rollout's reward against the other rollouts of its prompt; and their
random permutation (the null control) and the mixin that makes an objective its own null control."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from tvrl_bench.objectives.step_rewards import StepRewards


def group_advantages(
    rewards: torch.Tensor,
    group_ids: torch.Tensor,
    std_mode: str = "group",
    eps: float = 1e-4,
    clip: float | None = 5.0,
) -> torch.Tensor:
    """A_i = (R_i - mean of i's group) / (std + eps), optionally clipped to [-clip, clip].

    rewards[B] float; group_ids[B] long (rollouts of one prompt share an id). std_mode: "group" (std within
    each group, Flow-GRPO's per-prompt stats), "global" (std over the whole batch, Dr.GRPO-style), or "none"
    (mean-centred only). Std is the population std (unbiased=False), as the references compute it.
    """
    if std_mode not in ("group", "global", "none"):
        raise ValueError(f"std_mode must be 'group', 'global' or 'none', got '{std_mode}'")
    rewards = rewards.to(torch.float32)
    _, inverse = torch.unique(group_ids, return_inverse=True)
    n_groups = int(inverse.max()) + 1
    counts = torch.zeros(n_groups).index_add_(0, inverse, torch.ones_like(rewards))
    means = torch.zeros(n_groups).index_add_(0, inverse, rewards) / counts
    centred = rewards - means[inverse]
    if std_mode == "group":
        var = torch.zeros(n_groups).index_add_(0, inverse, centred**2) / counts
        advantages = centred / (var.sqrt()[inverse] + eps)
    elif std_mode == "global":
        advantages = centred / (rewards.std(unbiased=False) + eps)
    else:
        advantages = centred
    if clip is not None:
        advantages = advantages.clamp(-clip, clip)
    return advantages


def permuted_advantages(advantages: torch.Tensor, generator: torch.Generator, groups: torch.Tensor | None = None,
                        within_groups: bool = False) -> torch.Tensor:
    """advantages[B] (or [B, K]: rows move whole) randomly permuted across the rollouts (within_groups: only among the
    rollouts of one group, groups[B] their group ids), with `generator`'s draws."""
    if not within_groups:
        return advantages[torch.randperm(len(advantages), generator=generator)]
    if groups is None:
        raise ValueError("a null control's within_groups = True needs the rollouts' group ids")
    order = torch.arange(len(advantages))
    for group in torch.unique(groups):
        members = (groups == group).nonzero().flatten()
        order[members] = members[torch.randperm(len(members), generator=generator)]
    return advantages[order]


class PermutedAdvantages:
    """Mixin (before the objective's class) that makes an objective its null control: the same loss with the step's
    advantages randomly permuted, method label `null`. Its constructor takes the objective's own parameters and
    `within_groups`, so a null control restates neither (`@register` composes the signature, constructors.py), and
    the objective's bindings reach it (`objectives.nft.beta` binds `objectives.nft_null.beta` too, unless that is
    bound itself: config/inherited.py), so a study that tunes the objective tunes its null control."""

    method = "null"
    INHERITS_BINDINGS = True

    def __init__(self, *args: Any, within_groups: bool = True, **kwargs: Any):
        """within_groups: permute only among the rollouts of one prompt (True: each group's advantages keep summing
        to zero, as the real ones do); False permutes across the whole step, which also pushes each prompt's
        conditional mean in a random direction."""
        super().__init__(*args, **kwargs)
        self.within_groups = within_groups

    def advantages(self, step: "StepRewards") -> torch.Tensor:
        """The objective's own advantages of the step ([B], or [B, K] per check) with their rollouts permuted by the
        step's generator (within its groups when `within_groups`): a rollout takes another's advantages whole."""
        return permuted_advantages(super().advantages(step), step.generator, step.groups, self.within_groups)
