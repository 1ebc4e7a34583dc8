"""Gradient signal of a training profile: do the policy gradients of independent batches point the same way?

At fixed parameters, collect `--batches` independent steps (each with its own prompts and rollout noise, exactly
as training draws them), compute each one's policy gradient (no optimizer step) and report the mean pairwise
cosine between them with its standard error. A cosine near 0 means each step's gradient is mostly noise: Adam
then takes steps of a fixed size in random directions, and training drifts instead of learning. Rising cosine
with more rollouts per step is the signal that gradient accumulation buys.

Last line: grad_cosine=<mean> grad_cosine_se=<standard error> rollouts=<per batch> batches=<n>

    python benchmarks/grad_signal.py [--batches 6] [FILES.gin ...] [--gin_bindings "training.trial.prompts_per_step = 8"]

(It is grad_signal.py, not signal.py: a script of that name would shadow the standard library's `signal` module.)
"""

from __future__ import annotations

import argparse
import itertools
import math
import tempfile

import gin
import torch

from tvrl_bench.config import load_config
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.distributed import Processes
from tvrl_bench.training.loop import Trainer
from tvrl_bench.training.settings import TrialSettings


def batch_gradients(trainer: Trainer, batches: int) -> list[torch.Tensor]:
    """The flattened policy gradient of `batches` independent steps at the trainer's current parameters."""
    grads = []
    for step in range(batches):
        batch = trainer.collect(step)
        trainer.optimizer.zero_grad(set_to_none=True)
        for m in range(trainer.s.minibatches):
            trainer.policy_gradient(batch, m)
        grads.append(torch.cat([p.grad.reshape(-1) for p in trainer.parameters if p.grad is not None]).clone())
        print(f"batch {step + 1}/{batches}: grad norm {float(grads[-1].norm()):.4g}", flush=True)
    return grads


def pairwise_cosines(grads: list[torch.Tensor]) -> torch.Tensor:
    """Cosine similarity of every pair of gradient vectors, [n (n - 1) / 2]."""
    return torch.stack([torch.nn.functional.cosine_similarity(a, b, dim=0) for a, b in itertools.combinations(grads, 2)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", help="gin files after components/profiles/toy.gin (presets to swap in)")
    parser.add_argument("--profile", default="components/profiles/toy.gin", help="the profile measured (default: the toy profile)")
    parser.add_argument("--batches", type=int, default=6, help="independent batches (>= 2); the pairs are their combinations")
    parser.add_argument("--gin_bindings", nargs="*", default=[], help="extra gin bindings, e.g. 'training.trial.prompts_per_step = 2'")
    args = parser.parse_args()
    if args.batches < 2:
        parser.error("--batches must be at least 2 (a cosine needs a pair)")
    torch.set_num_threads(1)
    load_config([args.profile, *args.files], args.gin_bindings)
    settings = TrialSettings()
    gin.clear_config()
    with tempfile.TemporaryDirectory() as folder:
        trainer = Trainer(settings, Processes(cpu=True), CheckpointDir(folder), None, progress=False)
        cosines = pairwise_cosines(batch_gradients(trainer, args.batches))
    mean = float(cosines.mean())
    # pairs share batches, so this standard error (over batches, not pairs) is the honest one
    se = float(cosines.std()) / math.sqrt(args.batches)
    rollouts = settings.prompts_per_step * settings.group_size
    print(f"pairwise cosines: {[round(float(c), 3) for c in cosines]}")
    print(f"grad_cosine={mean:.4f} grad_cosine_se={se:.4f} rollouts={rollouts} batches={args.batches}")


if __name__ == "__main__":
    main()
