"""Credit screen b, gradient quality: does a router's batch gradient point where many rollouts' gradient points?

Routed credit acts like a larger batch: a router right for the part that failed removes noise from each batch's
policy gradient without moving its mean. At the base's weights this screen computes a reference gradient, uniform
credit's mean policy gradient over `--reference_rollouts` rollouts (>= 4,096 is the gate's), then `--batches`
independent batches of the trial's own size (new prompts and noise), and for each batch the policy gradient under
every router in `--routers`, all from the same rollouts; it reports each router's mean cosine with the reference.
The gate: the positive control (`--positive`) reaches >= 1.5 times uniform credit's cosine, and the shuffled
control (`--shuffled`) does not exceed uniform's. No optimizer step is taken; runs on any profile.

Last line: <router>=<mean cosine> for every router, then positive_over_uniform=<ratio>
shuffled_over_uniform=<ratio> rollouts=<per batch> reference_rollouts=<n>; the line before gives each ratio's 95%
bootstrap interval over the batches (one batch serves every router, so they are redrawn together).

    python diagnostics/screen_gradients.py [--profile components/profiles/toy.gin] [--batches 32] \\
        [--reference_rollouts 4096] [--routers components/credit/uniform.gin components/credit/window3.gin ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

import torch
from tqdm.auto import tqdm

from tvrl_bench.cli.script import UserError, at_least, must, run_script, script_parser
from tvrl_bench.credit.weights import route
from tvrl_bench.diagnostics.gradients import flat_gradient
from tvrl_bench.diagnostics.profile import add_profile_arguments, profile_trainer, router_of
from tvrl_bench.diagnostics.screens import cosines_to_reference, ratio_interval

ROUTERS = ["components/credit/uniform.gin", "components/credit/window3.gin", "components/credit/frame.gin",
           "components/credit/located.gin", "components/credit/shuffled3.gin"]


def gradient_under(trainer, batch, router) -> torch.Tensor:
    """The flat policy gradient [D] of `batch`'s rollouts with their credit routed by `router` (no optimizer step)."""
    s = trainer.s
    weights = route(router, batch.scored.grads, batch.video, trainer.policy.token_grid, batch.scored.mask,
                    s.objective.credit_layout, trainer.processes.device, batch.checks)
    routed = dataclasses.replace(batch, weights=weights)
    trainer.optimizer.zero_grad(set_to_none=True)
    for m in range(s.minibatches):
        trainer.policy_gradient(routed, m)
    return flat_gradient(trainer.parameters).clone()


def name_of(preset: str) -> str:
    return Path(preset).stem


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    add_profile_arguments(parser, seed=True)
    parser.add_argument("--batches", type=int, default=32, action=must(lambda v: v >= 2, "2 or more (a standard error needs two)"),
                        help="independent test batches of the trial's size (default 32)")
    parser.add_argument("--reference_rollouts", type=int, default=4096, action=at_least(1),
                        help="rollouts behind the reference gradient, uniform credit's mean (default 4096)")
    parser.add_argument("--routers", nargs="+", default=ROUTERS, help="credit presets compared (default: uniform, "
                        "window3, frame, located, shuffled3); the first is the reference's router")
    parser.add_argument("--positive", default="located", help="the positive control among --routers (file stem)")
    parser.add_argument("--shuffled", default="shuffled3", help="the shuffled control among --routers (file stem)")
    return run_script(parser, screen, argv)


def screen(args: argparse.Namespace) -> None:
    stems = [name_of(p) for p in args.routers]
    for flag, stem in (("--positive", args.positive), ("--shuffled", args.shuffled)):
        if stem not in stems:
            raise UserError(f"{flag} {stem}: not among --routers ({', '.join(stems)}); name one of them")
    args.gin_bindings = [*args.gin_bindings, "training.trial.keep_rollout_graph = False"]  # one rollout, many routers
    routers = {name_of(p): router_of(args, p) for p in args.routers}
    # the trainer collects with a router that needs the critic's gradients when any does: computed once per batch
    collecting = next((r for r in routers.values() if r.needs_grads), next(iter(routers.values())))
    with profile_trainer(args, credit=collecting) as trainer:
        uniform = next(iter(routers.values()))
        per_batch = trainer.s.prompts_per_step * trainer.s.group_size
        n_reference = math.ceil(args.reference_rollouts / per_batch)
        reference = None
        for step in tqdm(range(n_reference), desc="reference", unit="batch", mininterval=10):
            g = gradient_under(trainer, trainer.collect(step), uniform)
            reference = g if reference is None else reference + g
        reference /= n_reference
        grads: dict[str, list[torch.Tensor]] = {name: [] for name in routers}
        for j in tqdm(range(args.batches), desc="test batches", unit="batch", mininterval=10):
            batch = trainer.collect(n_reference + j)  # steps the reference did not draw: independent prompts and noise
            for name, router in routers.items():
                grads[name].append(gradient_under(trainer, batch, router))
    stats = {name: cosines_to_reference(torch.stack(g), reference) for name, g in grads.items()}
    first = next(iter(stats))
    for name, c in stats.items():
        print(f"{name:<12} cosine {c.mean:+.4f} +- {c.se:.4f}  ({c.mean / stats[first].mean:.2f} x {first})")
    ratio = {}
    for which, name in (("positive", args.positive), ("shuffled", args.shuffled)):
        ratio[which] = stats[name].mean / stats[first].mean
        low, high = ratio_interval(stats[name].values, stats[first].values)
        print(f"{which} control {name} / {first}: {ratio[which]:.2f} [{low:.2f}, {high:.2f}] "
              f"(95% bootstrap over the batches)")
    cosines = " ".join(f"{name}={c.mean:.4f}" for name, c in stats.items())
    print(f"{cosines} positive_over_uniform={ratio['positive']:.2f} shuffled_over_uniform={ratio['shuffled']:.2f} "
          f"rollouts={per_batch} reference_rollouts={n_reference * per_batch}")


if __name__ == "__main__":
    sys.exit(main())
