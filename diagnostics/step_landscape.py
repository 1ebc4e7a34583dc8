"""How far does one step along a batch's exact reward gradient move the reward, on that batch and on another?

`pathwise.py` follows the critic's exact gradient for many steps; when it does not climb, this diagnostic says why
in two minutes. It computes the pathwise gradient g of the critic's mean reward (through the whole sampling chain)
on batch A (training step `--step`'s prompts and noise) and on batch B (the next step's), then moves the weights
by alpha along a direction d and scores both batches again (no gradient, the same noise):

- `sign`: d = sign(g_A), Adam's first step (every trained weight moves by alpha);
- `normalized`: d = g_A / rms(g_A), the gradient itself at the same root-mean-square step, so that a given alpha
  moves the weights as far in total as the sign step does.

For each alpha it prints the reward change on A, its first-order prediction alpha * <g_A, d>, and the change on
B. Actual far below predicted: curvature of the sampling chain limits the step. A on the rise and B not: the batch
gradient does not transfer (it fits the batch's prompts and noise). The cosine between g_A and g_B says the same
before any step. Train fewer weights with `--gin_bindings "policies.toy.train = ('proj_out',)"`.

    python diagnostics/step_landscape.py [--profile components/profiles/toy_v2.gin] [--alphas 1e-5 1e-4 ...]
"""

from __future__ import annotations

import argparse
import sys

import torch

from tvrl_bench.cli.script import above, at_least, run_script, script_parser
from tvrl_bench.diagnostics.gradients import batch_reward, flat_gradient, set_weights, step_directions
from tvrl_bench.diagnostics.profile import add_profile_arguments, profile_trial


def gradient(trial, trainer, step: int, seed: int) -> tuple[float, torch.Tensor]:
    """(batch reward, flat gradient of it over the trained parameters) for training step `step`'s batch."""
    for p in trainer.parameters:
        p.grad = None
    reward = batch_reward(trial, trainer, step, seed, backward=True)
    return float(reward), flat_gradient(trainer.parameters)


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--alphas", type=float, nargs="+", default=[1e-5, 3e-5, 1e-4, 3e-4], action=above(0),
                        help="per-weight root-mean-square step sizes to try (default 1e-5 3e-5 1e-4 3e-4)")
    parser.add_argument("--step", type=int, default=0, action=at_least(0),
                        help="batch A is this training step's batch, B the next's")
    add_profile_arguments(parser, seed=True)
    return run_script(parser, landscape, argv)


def landscape(args: argparse.Namespace) -> None:
    with profile_trial(args) as (trial, trainer):
        params = trainer.parameters
        start = [p.detach().clone() for p in params]
        reward_a, g_a = gradient(trial, trainer, args.step, args.seed)
        reward_b, g_b = gradient(trial, trainer, args.step + 1, args.seed)
        cosine = float(g_a @ g_b / (g_a.norm() * g_b.norm()).clamp_min(1e-30))
        print(f"trained weights {g_a.numel()}, reward A {reward_a:.4f}, B {reward_b:.4f}, |g_A| {float(g_a.norm()):.4g}, "
              f"cos(g_A, g_B) {cosine:+.4f}", flush=True)
        print("direction  alpha     dA actual  dA first-order  dB actual")
        for name, d in step_directions(g_a).items():
            slope = float(g_a @ d)
            for alpha in args.alphas:
                set_weights(params, start, alpha * d)
                new_a = float(batch_reward(trial, trainer, args.step, args.seed, backward=False))
                new_b = float(batch_reward(trial, trainer, args.step + 1, args.seed, backward=False))
                print(f"{name:<10} {alpha:<8.1e} {new_a - reward_a:+10.4f} {alpha * slope:+15.4f} {new_b - reward_b:+10.4f}", flush=True)
        set_weights(params, start, torch.zeros_like(g_a))


if __name__ == "__main__":
    sys.exit(main())
