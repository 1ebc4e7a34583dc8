"""Where a credit router puts a rollout's advantage: how concentrated its maps are, and where the failed checks lie.

Collects `--steps` training batches of the profile exactly as a trial's first steps do (no update) and reads the
credit map each rollout's advantage is routed by (`weights.merged[B, T', H', W']`, mean 1):

    effective token fraction   1 / (N * sum_n p_n^2) with p = w / sum(w): 1.0 for uniform credit, 1/N for one token
    top-10% mass               the share of the credit held by the 10% most-weighted tokens (0.10 for uniform)

and, per check kind, the pixels of each check's object in the rollout (the located router's masks,
credit/located.py: the check's colour, the background colour, or every sprite colour) and how often the object is
absent (no pixel matches, so the mask is the whole video); then, of the checks the exact evaluator fails, how many
have their object absent. A failed check with its object absent has no place to be credited.

Last line: effective_fraction=<mean> top10_mass=<mean> failed_absent=<fraction> rollouts=<n>

    python diagnostics/credit_concentration.py components/credit/located.gin [--steps 4] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys

import torch

from tvrl_bench.cli.script import above, at_least, run_script, script_parser
from tvrl_bench.credit.located import check_pixels, palette_labels
from tvrl_bench.diagnostics.profile import add_profile_arguments, profile_trainer
from tvrl_bench.world.checks import check_kind


def concentration(merged: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(effective token fraction[B], top-10% mass[B]) of credit maps merged[B, T', H', W'] (non-negative)."""
    w = merged.flatten(1).to(torch.float64)
    p = w / w.sum(1, keepdim=True)
    n = p.shape[1]
    effective = 1.0 / (p.pow(2).sum(1) * n)
    top = p.sort(1, descending=True).values[:, : max(1, n // 10)].sum(1)
    return effective, top


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    add_profile_arguments(parser, seed=True)
    parser.add_argument("--steps", type=int, default=4, action=at_least(1), help="training batches collected (default 4)")
    parser.add_argument("--tolerance", type=float, default=0.3, action=above(0),
                        help="RGB distance within which a pixel takes a palette colour (default 0.3, the located router's)")
    return run_script(parser, concentration_of_credit, argv)


def concentration_of_credit(args: argparse.Namespace) -> None:
    effective, top, per_kind = [], [], {}
    failed = absent_failed = 0
    with profile_trainer(args) as trainer:
        for step in range(args.steps):
            batch = trainer.collect(step)
            e, t = concentration(batch.weights.merged)
            effective.append(e)
            top.append(t)
            labels = palette_labels(batch.video, args.tolerance)
            _, records = trainer.s.evaluator.evaluate_detailed(batch.video, batch.prompts, [tuple(c) for c in batch.checks])
            for b, record in enumerate(records):
                for verdict in record["checks"]:
                    mask = check_pixels(labels[b], verdict["check"])
                    absent = bool((mask == 1).all())
                    row = per_kind.setdefault(check_kind(verdict["check"]) or "other", [0, 0.0, 0])
                    row[0] += 1
                    row[1] += float(mask.mean())
                    row[2] += absent
                    if not verdict["passed"]:
                        failed += 1
                        absent_failed += absent
    effective, top = torch.cat(effective), torch.cat(top)
    print(f"{'kind':<11} {'checks':>6} {'object pixels':>13} {'absent':>7}")
    for kind, (n, fraction, absent) in sorted(per_kind.items()):
        print(f"{kind:<11} {n:>6} {fraction / n:>13.3f} {absent / n:>7.3f}")
    print(f"checks the evaluator fails: {failed}, with the object absent: {absent_failed}")
    print(f"effective_fraction={effective.mean():.3f} top10_mass={top.mean():.3f} "
          f"failed_absent={absent_failed / max(failed, 1):.3f} rollouts={effective.numel()}")


if __name__ == "__main__":
    sys.exit(main())
