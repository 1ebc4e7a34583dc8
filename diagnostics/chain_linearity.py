"""Is the map from the policy's weights to its sampled videos linear at the step sizes training takes?

A pathwise gradient (`pathwise.py`, `step_landscape.py`) predicts how the sampled videos change under a weight
step only while that map is close to linear over the step. This diagnostic measures it without any critic: for a
fixed random projection y = <R, out> of an output, it takes the gradient g of y, moves the weights by alpha and
2 alpha along a direction d (`sign`: sign(g), Adam's first step; `normalized`: g / rms(g)) and prints

- rms: the root-mean-square change of the output at alpha;
- nonlinearity: |out(2a) - 2 out(a) + out(0)| / |out(2a) - out(0)|, 0 for a linear map, near 1 when the change
  at 2 alpha has little to do with twice the change at alpha.

for two outputs: one network call (the guided velocity at sigma `--sigma` on a noised input) and the whole ODE
sampling chain of the profile's schedule (the latents a pathwise gradient differentiates). One call close to
linear and the chain not means the chain amplifies weight changes (rollouts switch between layouts), and a
pathwise step is only trustworthy below the chain's linear range.

    python diagnostics/chain_linearity.py [--profile components/profiles/toy_v2.gin] [--alphas 1e-7 1e-6 1e-5 1e-4]
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

import torch

from tvrl_bench.cli.script import above, at_least, must, run_script, script_parser
from tvrl_bench.diagnostics.gradients import flat_gradient, set_weights, step_directions
from tvrl_bench.diagnostics.profile import add_profile_arguments, profile_trial


def measure(name: str, output: Callable[[], torch.Tensor], params: list, alphas: list[float]) -> None:
    """Print rms change and nonlinearity of output() (a tensor) along sign and normalized directions."""
    start = [p.detach().clone() for p in params]
    y0 = output()
    projection = torch.randn(y0.shape, generator=torch.Generator().manual_seed(1))
    for p in params:
        p.grad = None
    (output() * projection).mean().backward()
    g = flat_gradient(params)
    y0 = y0.detach()
    for direction, d in step_directions(g).items():
        for alpha in alphas:
            with torch.no_grad():
                set_weights(params, start, alpha * d)
                y1 = output()
                set_weights(params, start, 2 * alpha * d)
                y2 = output()
            rms = float((y1 - y0).pow(2).mean().sqrt())
            nonlinearity = float((y2 - 2 * y1 + y0).norm() / (y2 - y0).norm().clamp_min(1e-30))
            print(f"{name:<6} {direction:<10} {alpha:<8.1e} {rms:10.4g} {nonlinearity:13.3f}", flush=True)
    set_weights(params, start, torch.zeros_like(g))


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--alphas", type=float, nargs="+", default=[1e-7, 1e-6, 1e-5, 1e-4], action=above(0),
                        help="per-weight root-mean-square step sizes (default 1e-7 1e-6 1e-5 1e-4)")
    parser.add_argument("--rollouts", type=int, default=8, action=at_least(1),
                        help="rollouts sampled (default 8: 2 prompts x 4)")
    parser.add_argument("--sigma", type=float, default=0.5, action=must(lambda v: 0 < v <= 1, "a noise level in (0, 1]"),
                        help="noise level of the single network call (default 0.5)")
    add_profile_arguments(parser, seed=True)
    return run_script(parser, linearity, argv)


def linearity(args: argparse.Namespace) -> None:
    with profile_trial(args) as (trial, trainer):
        policy = trial.policy
        items, _ = trainer.step_items(0)
        prompts = [it.prompt for it in items for _ in range(trial.settings.group_size)][: args.rollouts]
        cond = policy.encode(prompts)
        x = torch.randn(len(prompts), *policy.latent_shape(), generator=trial.noise("pathwise", 0, seed=args.seed))
        noised = (1 - args.sigma) * x.tanh() + args.sigma * torch.randn(x.shape, generator=torch.Generator().manual_seed(2))
        sigma = torch.full((len(prompts),), args.sigma)
        print("output direction  alpha        rms  nonlinearity")
        measure("call", lambda: policy.velocity(noised, sigma, cond), trainer.parameters, args.alphas)
        measure("chain", lambda: trial.ode_sample(x, cond), trainer.parameters, args.alphas)


if __name__ == "__main__":
    sys.exit(main())
