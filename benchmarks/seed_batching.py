"""Would training several seeds in one batched computation make a seed's trial cheaper? The screen, side by side.

The toy policy's cost per sample, in one process on one torch thread, at the default trial's shapes (the profile's
rollouts per step through the policy's CFG velocity, so every call is 2 x rollouts samples of 256 video + ~12 text
tokens):

- `single`: one seed's call, forward and backward (what a trial's update does), ms per rollout;
- `stacked`: S seeds' calls as one computation, each seed with its own copy of the weights, stacked and mapped
  with torch.func.vmap (the vectorised-RL way to train many seeds at once), ms per rollout;
- `same_weights`: S seeds' rollouts in one batch through one set of weights: the bound no stacking can beat
  (stacked weights add batched matrix products; the same weights need none);
- `sample_b<N>`: the evaluation's no-grad ODE call at micro-batches of N prompts, ms per prompt.

The calls take turns, so they see the same machine load. A ratio above 1 means the batched form is cheaper per
seed. Measured on this machine (docs/performance.md): the per-rollout cost is flat from one seed's batch up, so
batching seeds saves nothing here.

Last line: stacked_speedup=<single / stacked> same_weights_speedup=<single / same_weights>
eval_batch_speedup=<sample at the smallest micro-batch / at the largest> single_ms=<ms per rollout>

    python benchmarks/seed_batching.py [--seeds 3] [--repeats 3] [--policy-path DIR] [--profile FILE.gin]
                                       [--gin_bindings B ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Callable

import torch
from torch.func import functional_call, vmap

from tvrl_bench.cli.script import UserError, at_least, run_script, script_parser
from tvrl_bench.training.trial.built import build_trial
from tvrl_bench.world.declaration import DEFAULT_PROFILE

EVAL_MICRO_BATCHES = (8, 32, 64)


class Velocity(torch.nn.Module):
    """The policy's CFG velocity at one noise level as a module of x alone: x[B, C, T, H, W] -> v (same shape)."""

    def __init__(self, policy: torch.nn.Module, sigma: float, cond) -> None:
        super().__init__()
        self.policy, self.sigma, self.cond = policy, sigma, cond

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.policy.velocity(x, torch.full((len(x),), self.sigma), self.cond)


def profile_parts(profile: str, bindings: list[str]):
    """(policy, prompts of one step: list[str] of prompts_per_step x group_size) of the profile's built trial."""
    trial = build_trial([profile], bindings)
    items = list(trial.dataset.train)[: trial.settings.prompts_per_step]
    return trial.policy, [it.prompt for it in items for _ in range(trial.settings.group_size)]


def _timed(fn: Callable[[], None]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def calls(policy, prompts: list[str], seeds: int) -> dict[str, tuple[Callable[[], None], int]]:
    """name -> (the call, the rollouts it computes)."""
    c, t, h, w = policy.latent_shape()
    n = len(prompts)
    g = torch.Generator().manual_seed(0)
    one = Velocity(policy, 0.9, policy.encode(prompts))
    many = Velocity(policy, 0.9, policy.encode(prompts * seeds))
    x = torch.randn(n, c, t, h, w, generator=g)
    xs = torch.randn(seeds, n, c, t, h, w, generator=g)
    trained = {id(p) for p in policy.trainable_parameters()}
    for p in policy.parameters():  # the trial's gradient flows to its trained parameters only
        p.requires_grad_(id(p) in trained)
    stacked = {k: p.detach().unsqueeze(0).repeat(seeds, *[1] * p.dim()).requires_grad_(p.requires_grad)
               for k, p in one.named_parameters()}

    def train(module: torch.nn.Module, inputs: torch.Tensor) -> None:
        module(inputs).square().mean().backward()
        module.zero_grad(set_to_none=True)

    def stacked_call() -> None:
        out = vmap(lambda p, xx: functional_call(one, p, (xx,)), randomness="same")(stacked, xs)
        out.square().mean().backward()
        for p in stacked.values():
            p.grad = None

    made = {"single": (lambda: train(one, x), n), "stacked": (stacked_call, seeds * n),
            "same_weights": (lambda: train(many, xs.flatten(0, 1)), seeds * n)}
    for b in EVAL_MICRO_BATCHES:
        cond = policy.encode((prompts * b)[:b])
        xb = torch.randn(b, c, t, h, w, generator=g)
        made[f"sample_b{b}"] = (_no_grad(Velocity(policy, 0.9, cond), xb), b)
    return made


def _no_grad(module: torch.nn.Module, x: torch.Tensor) -> Callable[[], None]:
    def call() -> None:
        with torch.no_grad():
            module(x)
    return call


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--seeds", type=int, default=3, action=at_least(2), help="seeds batched together (default 3)")
    parser.add_argument("--repeats", type=int, default=3, action=at_least(1),
                        help="timed rounds; each call's best round counts (default 3)")
    parser.add_argument("--profile", default=DEFAULT_PROFILE,
                        help="the trial profile whose policy and step size are measured (default: the default's)")
    parser.add_argument("--policy-path", help="toy policy folder (default: the profile's)")
    parser.add_argument("--gin_bindings", nargs="*", default=[],
                        help="extra gin bindings for the profile, e.g. 'training.trial.prompts_per_step = 2'")
    return run_script(parser, benchmark, argv)


def benchmark(args: argparse.Namespace) -> None:
    if args.policy_path is not None and not Path(args.policy_path).is_dir():
        raise UserError(f"--policy-path {args.policy_path}: no such folder; pass a toy policy folder, or leave the "
                        "flag out for the profile's policy")
    torch.set_num_threads(1)
    bindings = [f"policies.toy.path = '{args.policy_path}'"] if args.policy_path else []
    bindings += args.gin_bindings
    policy, prompts = profile_parts(args.profile, bindings)
    print(f"machine load (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    made = calls(policy, prompts, args.seeds)
    rounds: dict[str, list[float]] = {name: [] for name in made}
    for name, (fn, _) in made.items():
        fn()  # warm-up
    for _ in range(args.repeats):  # the calls take turns
        for name, (fn, _) in made.items():
            rounds[name].append(_timed(fn))
    per = {name: min(rounds[name]) / made[name][1] * 1000 for name in made}  # ms per rollout or prompt
    for name, ms in per.items():
        unit = "prompt, no grad" if name.startswith("sample") else "rollout, forward + backward"
        print(f"{name}: {ms:.2f} ms per {unit} ({made[name][1]} per call; rounds {statistics.median(rounds[name]):.2f} s median)")
    print(f"machine load (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    small, large = f"sample_b{EVAL_MICRO_BATCHES[0]}", f"sample_b{EVAL_MICRO_BATCHES[-1]}"
    print(f"stacked_speedup={per['single'] / per['stacked']:.2f} same_weights_speedup={per['single'] / per['same_weights']:.2f} "
          f"eval_batch_speedup={per[small] / per[large]:.2f} single_ms={per['single']:.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
