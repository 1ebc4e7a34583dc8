"""Does the policy gradient, averaged over many batches, raise the critic's reward when the policy follows it?

`grad_signal.py` asks whether independent batch gradients agree; this asks whether their mean is worth following.
It computes the policy gradient of `--batches` independent steps at the base parameters (exactly as training
draws them, no optimizer step), reports the cosine between the means of the two halves (a larger-sample version
of grad_signal's question), then moves the trained parameters along the mean with Adam's normalisation
(each element divided by the rms of its gradient over the batches, so a step of size alpha moves each weight by
at most alpha, like `alpha / lr` Adam steps in a consistent direction) and scores a fixed set of held-out batches
(the same prompts and rollout noise for every alpha) with the critic.

A reward that rises with small alpha means the estimate points uphill and training needs only enough steps; one
that falls at every alpha means the mean gradient is still mostly noise at this many rollouts, and every step
costs what drift costs.

Last line: ascent_gain=<reward at the best alpha - reward at 0> half_cosine=<...> rollouts=<total>

    python diagnostics/ascent.py [--batches 12] [FILES.gin ...] [--gin_bindings "policies.toy.train = ('x_embedder',)"]
"""

from __future__ import annotations

import argparse
import sys

import torch

from tvrl_bench.cli.script import above, at_least, must, run_script, script_parser
from tvrl_bench.diagnostics.gradients import batch_gradients, flatten
from tvrl_bench.diagnostics.profile import add_profile_arguments, profile_trainer
from tvrl_bench.training.loop import Trainer

HELD_OUT_FIRST_STEP = 1000  # held-out batches are the steps from here on: prompts and noise no gradient batch saw


def held_out_reward(trainer: Trainer, batches: int) -> float:
    """Mean critic reward of `batches` fixed held-out steps' rollouts at the current parameters (sampled without
    keeping any graph: nothing is trained on them)."""
    rewards = []
    for k in range(batches):
        batch = trainer.collect(HELD_OUT_FIRST_STEP + k, keep_graph=False)
        rewards.append(batch.all_rewards.mean())
    return float(torch.stack(rewards).mean())


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--batches", type=int, default=12, action=must(lambda v: v >= 4, "4 or more (two halves of two)"),
                        help="gradient batches (>= 4, split into two halves)")
    parser.add_argument("--held_out", type=int, default=4, action=at_least(1), help="held-out batches scored at each step size")
    parser.add_argument("--alphas", type=float, nargs="+", default=[1e-3, 3e-3, 1e-2], action=above(0),
                        help="step sizes (per-weight bound)")
    add_profile_arguments(parser)
    return run_script(parser, ascend, argv)


def ascend(args: argparse.Namespace) -> None:
    with profile_trainer(args) as trainer:
        settings = trainer.s
        grads = batch_gradients(trainer, args.batches)
        half = args.batches // 2
        means = [[torch.stack(g).mean(0) for g in zip(*part)] for part in (grads[:half], grads[half:], grads)]
        half_cosine = float(torch.nn.functional.cosine_similarity(flatten(means[0]), flatten(means[1]), dim=0))
        print(f"cosine between the mean gradients of the two halves ({half} and {args.batches - half} batches): {half_cosine:+.4f}")
        singles = [flatten(b) for b in grads]
        pair = lambda a, b: float(torch.nn.functional.cosine_similarity(singles[a], singles[b], dim=0))
        within = [pair(a, b) for part in (range(half), range(half, args.batches)) for a in part for b in part if a < b]
        across = [pair(a, b) for a in range(half) for b in range(half, args.batches)]
        print(f"single-batch cosines: within halves {sum(within) / len(within):+.4f}, across halves {sum(across) / len(across):+.4f}")
        rms = [torch.stack(g).square().mean(0).sqrt().clamp_min(1e-12) for g in zip(*grads)]
        start = [p.detach().clone() for p in trainer.parameters]
        rewards = {0.0: held_out_reward(trainer, args.held_out)}
        print(f"alpha 0: held-out critic reward {rewards[0.0]:.4f}")
        for alpha in args.alphas:
            with torch.no_grad():  # descend the loss = ascend the reward
                for p, p0, g, r in zip(trainer.parameters, start, means[2], rms):
                    p.copy_(p0 - alpha * g / r)
            rewards[alpha] = held_out_reward(trainer, args.held_out)
            print(f"alpha {alpha:g}: held-out critic reward {rewards[alpha]:.4f} ({rewards[alpha] - rewards[0.0]:+.4f})", flush=True)
    gain = max(rewards.values()) - rewards[0.0]
    rollouts = args.batches * settings.prompts_per_step * settings.group_size
    print(f"ascent_gain={gain:.4f} half_cosine={half_cosine:.4f} rollouts={rollouts}")


if __name__ == "__main__":
    sys.exit(main())
