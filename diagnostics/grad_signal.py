"""Gradient signal of a training profile: do the policy gradients of independent batches point the same way?

At fixed parameters, collect `--batches` independent steps (each with its own prompts and rollout noise, exactly
as training draws them), compute each one's policy gradient (no optimizer step) and report the mean pairwise
cosine between them with its standard error. A cosine near 0 means each step's gradient is mostly noise: Adam
then takes steps of a fixed size in random directions, and training drifts instead of learning. Rising cosine
with more rollouts per step is the signal that gradient accumulation buys.

Last line: grad_cosine=<mean> grad_cosine_se=<standard error> rollouts=<per batch> batches=<n>

    python diagnostics/grad_signal.py [--batches 6] [FILES.gin ...] [--gin_bindings "training.trial.prompts_per_step = 8"]

(It is grad_signal.py, not signal.py: a script of that name would shadow the standard library's `signal` module.)
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys

import torch

from tvrl_bench.cli.script import must, run_script, script_parser
from tvrl_bench.diagnostics.gradients import batch_gradients, flatten
from tvrl_bench.diagnostics.profile import add_profile_arguments, profile_trainer
from tvrl_bench.training.loop import Trainer


def module_slices(trainer: Trainer) -> dict[str, slice]:
    """Where each module's trainable parameters sit in the flattened gradient, by the first two parts of their
    names (e.g. 'transformer_blocks.0')."""
    slices: dict[str, slice] = {}
    offset = 0
    for name, p in trainer.policy.named_trainable_parameters():
        key = ".".join(name.split(".")[:2])
        slices[key] = slice(slices[key].start if key in slices else offset, offset + p.numel())
        offset += p.numel()
    return slices


def pairwise_cosines(grads: list[torch.Tensor]) -> torch.Tensor:
    """Cosine similarity of every pair of gradient vectors, [n (n - 1) / 2]."""
    return torch.stack([torch.nn.functional.cosine_similarity(a, b, dim=0) for a, b in itertools.combinations(grads, 2)])


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--batches", type=int, default=6, action=must(lambda v: v >= 2, "2 or more (a cosine needs a pair)"),
                        help="independent batches (>= 2); the pairs are their combinations")
    parser.add_argument("--by_module", action="store_true", help="also print the cosine and gradient share of each module")
    add_profile_arguments(parser)
    return run_script(parser, measure, argv)


def measure(args: argparse.Namespace) -> None:
    with profile_trainer(args) as trainer:
        settings = trainer.s
        grads = [flatten(g) for g in batch_gradients(trainer, args.batches)]
        cosines = pairwise_cosines(grads)
        if args.by_module:
            total = sum(float(g.square().sum()) for g in grads)
            for key, part in module_slices(trainer).items():
                c = pairwise_cosines([g[part] for g in grads])
                share = sum(float(g[part].square().sum()) for g in grads) / total
                print(f"module {key}: cosine {float(c.mean()):+.3f} +- {float(c.std()) / math.sqrt(args.batches):.3f}, "
                      f"gradient share {share:.3f}")
    mean = float(cosines.mean())
    # pairs share batches, so this standard error (over batches, not pairs) is the honest one
    se = float(cosines.std()) / math.sqrt(args.batches)
    rollouts = settings.prompts_per_step * settings.group_size
    print(f"pairwise cosines: {[round(float(c), 3) for c in cosines]}")
    print(f"grad_cosine={mean:.4f} grad_cosine_se={se:.4f} rollouts={rollouts} batches={args.batches}")


if __name__ == "__main__":
    sys.exit(main())
