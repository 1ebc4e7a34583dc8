"""The metrics one optimizer step logs (`train/*`, `time/step_s`), from its batch and its updates' statistics."""

from __future__ import annotations

import torch

from tvrl_bench.training.step import diagnostics
from tvrl_bench.training.step.collect import StepBatch
from tvrl_bench.training.settings import TrialSettings

# The updates' statistics a step does not log as train/<name>: the loss is logged above, and policy_loss is the
# loss without its KL term. Every other statistic an objective or the anchor reports (ratio statistics, KL terms,
# an objective's own) is logged under its name, so a new objective needs no change here.
NOT_LOGGED = ("loss", "policy_loss")


def step_metrics(s: TrialSettings, batch: StepBatch, totals: dict[str, float], grad_norms: list[float],
                 entropy: torch.Tensor, seconds: float) -> dict[str, float]:
    """totals: the updates' statistics averaged over minibatches; entropy[B_all]: credit entropy per rollout."""
    metrics = {
        "train/reward_mean": float(batch.all_rewards.mean()),
        "train/reward_std": float(batch.all_rewards.std(unbiased=False)),
        "train/loss": totals["loss"],
        "train/grad_norm": sum(grad_norms) / len(grad_norms),
        "train/credit_entropy": float(entropy.mean()),
        "train/advantage_abs": float(batch.all_advantages.abs().mean()),
        **diagnostics.group_spread(batch.all_rewards.cpu(), batch.all_groups),
        # the critic's questions, not the prompts' checks: a head-based critic scores its heads instead
        **diagnostics.reward_per_kind(batch.scored.scores.cpu(), s.reward.questions(batch.checks)),
        "time/step_s": seconds,
    }
    for name, rewards in batch.all_critic_rewards.items():  # each critic of a reward made of several
        metrics[f"train/reward_{name}_mean"] = float(rewards.mean())
    if s.reward.floor_score is not None:
        metrics["train/floor_fraction"] = diagnostics.floor_fraction(batch.scored.scores, batch.scored.mask, s.reward.floor_score)
    if s.schedule.window_shift_every:  # a moving SDE window (MixGRPO): where this step's rollouts had it
        metrics["train/sde_window_start"] = float(s.schedule.window_start(batch.updates))
    for name, value in totals.items():
        if name not in NOT_LOGGED:
            metrics[f"train/{name}"] = value
    return metrics
