"""Credit screen c, locality: are a regime's errors local, independent between checks, spread over several checks?

Routed credit can only help where (1) a failed check's evidence sits at a known place of the video, (2) the checks
of a rollout fail independently, and (3) several checks carry the within-group reward variance that advantages
are made of. On the base's own rollouts (`--steps` training batches, collected exactly as a trial's first steps,
no update) this reports:

    local_failed   the share of failed checks whose evidence map covers at most `--local` of the tokens (its
                   effective fraction, 1 / (N sum p^2)); the gate is >= 0.9
    correlation    the pooled correlation of the checks' pass/fail outcomes within a rollout, each centred on its
                   check's group mean; the gate is |r| < 0.2
    parts          how many checks of a prompt carry its reward variance (participation ratio of the checks'
                   within-group variances; K for K equally varying checks)
    shares         each check kind's share of the within-group reward variance (sums to 1); on the slot world
                   each slot's (its checks are all of kind `slot`)

A check fails where the profile's evaluator says so (an evaluator with per-check records, as the toy one has),
otherwise where the critic's score is below `--fail_below`. Its evidence map is the per-check map of the router in
`--evidence` (default: the critic's own gradient, unsmoothed: components/credit/window1.gin); the toy world's
positive control is `components/credit/located.gin`. Runs on any profile whose critic gives gradients.

Last line: local_failed=<share> correlation=<r> parts=<n> failed=<checks> rollouts=<n>

    python diagnostics/screen_locality.py [--profile components/profiles/toy.gin] [--steps 8] \\
        [--evidence components/credit/located.gin]
"""

from __future__ import annotations

import argparse
import sys

import torch

from tvrl_bench.cli.script import above, at_least, must, run_script, script_parser
from tvrl_bench.diagnostics.profile import add_profile_arguments, profile_trainer, router_of
from tvrl_bench.diagnostics.screens import (effective_fraction, local_share, outcome_correlation, variance_parts,
                                            variance_shares)
from tvrl_bench.world.checks import check_row


def verdicts(trainer, batch, fail_below: float) -> torch.Tensor:
    """passed[B, K] float (1 passed, 0 failed) of the batch's checks: the evaluator's per-check records where it
    gives them, else the critic's score >= fail_below."""
    evaluate = getattr(trainer.s.evaluator, "evaluate_detailed", None)
    mask = batch.scored.mask.cpu()
    if evaluate is not None:
        _, records = evaluate(batch.video, batch.prompts, [tuple(c) for c in batch.checks])
        if all("checks" in r for r in records):
            passed = torch.zeros(mask.shape, dtype=torch.float64)
            for i, record in enumerate(records):
                for k, verdict in enumerate(record["checks"]):
                    passed[i, k] = float(verdict["passed"])
            return passed
    return (batch.scored.scores.cpu() >= fail_below).to(torch.float64)


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    add_profile_arguments(parser, seed=True)
    parser.add_argument("--steps", type=int, default=8, action=at_least(1),
                        help="training batches collected from the base (default 8)")
    parser.add_argument("--evidence", default="components/credit/window1.gin",
                        help="preset of the router whose per-check map is a check's evidence (default: the critic's "
                             "unsmoothed gradient, components/credit/window1.gin)")
    parser.add_argument("--local", type=float, default=1 / 3, action=must(lambda v: 0 < v <= 1, "a fraction in (0, 1]"),
                        help="a map covering at most this effective fraction of the tokens is local (default 1/3)")
    parser.add_argument("--fail_below", type=float, default=0.5, action=above(0),
                        help="without per-check evaluator records, a check fails where the critic's score is below "
                             "this (default 0.5, for critics scored as p(Yes))")
    return run_script(parser, screen, argv)


def screen(args: argparse.Namespace) -> None:
    fractions, passed, scores, masks, groups, labels = [], [], [], [], [], []
    router = router_of(args, args.evidence)
    with profile_trainer(args, credit=router) as trainer:
        for step in range(args.steps):
            batch = trainer.collect(step)
            grid = trainer.policy.token_grid
            bound = router.given_checks(batch.checks) if router.needs_checks else router
            maps = bound.per_check(batch.scored.grads, batch.video, grid, batch.scored.mask)  # [B, K or 1, T', H', W']
            mask = batch.scored.mask.cpu()
            f = effective_fraction(maps.flatten(2).cpu())  # [B, K or 1]
            fractions.append(f.expand(mask.shape) if f.shape[1] == 1 else f)
            passed.append(verdicts(trainer, batch, args.fail_below))
            scores.append(batch.scored.scores.cpu())
            masks.append(mask)
            groups.append(batch.all_groups.cpu() + step * 10_000)
            labels += [[check_row(q) or f"check {k}" for k, q in enumerate(row)] for row in batch.checks]
            print(f"batch {step + 1}/{args.steps} collected", flush=True)
    width = max(m.shape[1] for m in masks)
    pad = lambda t: torch.nn.functional.pad(t, (0, width - t.shape[1]))  # noqa: E731
    fractions, passed = torch.cat([pad(f) for f in fractions]), torch.cat([pad(p) for p in passed])
    scores, mask, groups = torch.cat([pad(s) for s in scores]), torch.cat([pad(m) for m in masks]), torch.cat(groups)
    failed = (passed < 0.5) & mask
    share = local_share(failed, fractions, args.local)
    r = outcome_correlation(passed, mask, groups)
    parts = variance_parts(scores, mask, groups)
    print(f"{'kind':<16} {'checks':>6} {'failed':>7} {'evidence fraction':>17} {'variance share':>14}")
    shares = variance_shares(scores, mask, groups, labels)
    for kind in sorted({label for row in labels for label in row}):
        chosen = torch.tensor([[j < len(row) and row[j] == kind for j in range(width)] for row in labels]) & mask
        print(f"{kind:<16} {int(chosen.sum()):>6} {float(failed[chosen].double().mean()):>7.3f} "
              f"{float(fractions[chosen].mean()):>17.3f} {shares.get(kind, 0.0):>+14.3f}")
    print(f"local_failed={share:.3f} correlation={r:+.3f} parts={parts:.2f} failed={int(failed.sum())} "
          f"rollouts={len(scores)}")


if __name__ == "__main__":
    sys.exit(main())
