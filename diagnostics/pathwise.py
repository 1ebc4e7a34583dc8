"""How far do the critic's reward and the exact evaluator move when the critic's own gradient is followed?

The RL objectives estimate the policy gradient from rewards alone (score-function estimates, noisy at tens of
rollouts). This diagnostic asks what the critic can give at best: it backpropagates the critic's reward through the
whole deterministic sampling chain into the policy (direct reward backpropagation, a pathwise gradient with far
less noise per rollout) and trains with Adam on the profile's prompts, batch size and schedule. The fixed eval
prompts are scored by the exact evaluator and the critic every `--eval_every` steps, with the trial's fixed noise.

`--fixed_batch` trains on one batch (the same prompts and initial noise every step): if even that batch's reward
does not climb, the limit is the optimisation through the sampling chain, not the critic's signal or its noise.

If the evaluator rises here, the RL loop's problem is its estimate. If it does not, first check that a step of the
learning rate is inside the sampling chain's linear range (`chain_linearity.py`, `step_landscape.py`): a policy
whose samples switch between discrete layouts (the v2 toy policy) is not linear at any useful step, and then this
gradient, which sees only the layout each rollout fell into, says nothing about the expected reward's ceiling
(docs/log/toy_rl_log.md, gate 1). Only inside that range does "no rise here" mean the critic or the policy is the limit.

Last line: pathwise_overall=<end - start> pathwise_critic=<end - start> steps=<n>

    python diagnostics/pathwise.py [--steps 60] [--lr 1e-4] [FILES.gin ...] [--gin_bindings ...]
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from tvrl_bench.cli.script import above, at_least, run_script, script_parser
from tvrl_bench.diagnostics.gradients import batch_reward
from tvrl_bench.diagnostics.profile import add_profile_arguments, profile_trial


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--steps", type=int, default=60, action=at_least(1),
                        help="optimizer steps (default 60, the toy profile's)")
    parser.add_argument("--lr", type=float, default=1e-4, action=above(0),
                        help="Adam learning rate (default 1e-4, the toy profile's)")
    parser.add_argument("--eval_every", type=int, default=20, action=at_least(1),
                        help="evaluate the fixed eval prompts every N steps (and after the last)")
    parser.add_argument("--fixed_batch", action="store_true",
                        help="train on step 0's prompts and initial noise at every step: can the policy climb the "
                             "critic on one batch at all? (its train reward is then that batch's, step after step)")
    add_profile_arguments(parser, seed=True)
    return run_script(parser, train_pathwise, argv)


def train_pathwise(args: argparse.Namespace) -> None:
    with profile_trial(args) as (trial, trainer):
        optimizer = torch.optim.Adam(trainer.parameters, lr=args.lr)
        evaluations = {}

        def evaluate(step: int) -> None:
            with torch.no_grad():
                metrics = trainer.evaluation.full().metrics
            evaluations[step] = (metrics["overall"], metrics["critic_reward"])
            print(f"step {step}: eval overall {metrics['overall']:.4f}, critic {metrics['critic_reward']:.4f}", flush=True)

        evaluate(0)
        for step in range(args.steps):
            started = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            reward = batch_reward(trial, trainer, 0 if args.fixed_batch else step, args.seed)
            norm = torch.nn.utils.clip_grad_norm_(trainer.parameters, trainer.s.max_grad_norm)
            optimizer.step()
            print(f"step {step + 1}: train reward {float(reward):.4f}, grad norm {float(norm):.4g}, "
                  f"{time.perf_counter() - started:.1f} s", flush=True)
            if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
                evaluate(step + 1)
        first, last = evaluations[0], evaluations[args.steps]
        print(f"pathwise_overall={last[0] - first[0]:+.4f} pathwise_critic={last[1] - first[1]:+.4f} steps={args.steps}")


if __name__ == "__main__":
    sys.exit(main())
