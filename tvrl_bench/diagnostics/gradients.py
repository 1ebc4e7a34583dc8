"""Policy gradients at fixed weights, for the gradient diagnostics: per batch, flattened, steps along them, and the
exact (pathwise) gradient of a batch's reward.

Every gradient is a list of per-parameter tensors in the order of `trainer.parameters`, or one flat vector [D]
(D = the trained parameters' total size) of them.
"""

from __future__ import annotations

import torch

from tvrl_bench.training.loop import Trainer
from tvrl_bench.training.trial.built import BuiltTrial


def batch_gradients(trainer: Trainer, batches: int) -> list[list[torch.Tensor]]:
    """Per batch (training steps 0..batches-1, each with its own prompts and noise), the policy-loss gradient of
    every trained parameter at the current weights, no optimizer step; zeros where the loss does not reach one."""
    grads = []
    for step in range(batches):
        batch = trainer.collect(step)
        trainer.optimizer.zero_grad(set_to_none=True)
        for m in range(trainer.s.minibatches):
            trainer.policy_gradient(batch, m)
        grads.append([torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in trainer.parameters])
        print(f"gradient batch {step + 1}/{batches}: norm {float(flatten(grads[-1]).norm()):.4g}", flush=True)
    return grads


def set_weights(params: list[torch.Tensor], start: list[torch.Tensor], step: torch.Tensor) -> None:
    """Set every parameter to its start plus its slice of the flat step vector [D] (in the parameters' order)."""
    offset = 0
    with torch.no_grad():
        for p, p0 in zip(params, start):
            p.copy_(p0 + step[offset:offset + p.numel()].view_as(p))
            offset += p.numel()


def flat_gradient(params: list[torch.Tensor]) -> torch.Tensor:
    """The parameters' accumulated gradients as one vector [D] (zeros where the loss did not reach a parameter)."""
    return flatten([torch.zeros_like(p) if p.grad is None else p.grad for p in params])


def step_directions(g: torch.Tensor) -> dict[str, torch.Tensor]:
    """The two unit-size step directions of a flat gradient g[D]: 'sign' (sign(g), Adam's first step: every weight
    moves by alpha) and 'normalized' (g / rms(g): the gradient itself, moving the weights as far in total)."""
    return {"sign": torch.sign(g), "normalized": g / g.pow(2).mean().sqrt().clamp_min(1e-30)}


def flatten(gradient: list[torch.Tensor]) -> torch.Tensor:
    """One vector [D] of a per-parameter gradient, in the order of the trainer's parameters."""
    return torch.cat([g.reshape(-1) for g in gradient])


def batch_reward(trial: BuiltTrial, trainer: Trainer, step: int, seed: int, backward: bool = True) -> torch.Tensor:
    """The critic's mean reward over the step's rollouts (the profile's prompts x group size), sampled by ODE from
    the step's own initial noise; a 0-d tensor. backward: accumulate its gradient into the policy's parameters
    through every sampling step (one backward per micro-batch keeps one chain's graph alive); False scores only.
    `trainer` is the built `trial`'s (profile.py `profile_trial`)."""
    policy = trial.policy
    items, _ = trainer.step_items(step)
    items = [it for it in items for _ in range(trial.settings.group_size)]
    prompts, checks = [it.prompt for it in items], [list(it.checks) for it in items]
    x = torch.randn(len(items), *policy.latent_shape(), generator=trial.noise("pathwise", step, seed=seed))
    total = x.new_zeros(())
    with torch.enable_grad() if backward else torch.no_grad():
        for c in trial.micro_batches(len(items)):
            x0 = trial.ode_sample(x[c], policy.encode(prompts[c]))
            rewards = trial.rewards_with_graph(policy.decode(x0), prompts[c], checks[c])
            if backward:
                (-(rewards.sum() / len(items))).backward()
            total = total + rewards.detach().sum() / len(items)
    return total
