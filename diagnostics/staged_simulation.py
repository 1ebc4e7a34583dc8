"""How staged decisions behave on studies like the credit study: error rate, power and trials, staged vs fixed grids.

Simulates `--studies` synthetic studies per true difference (every one of `--arms` arms differs from the baseline
by d points; seed spread `--sd` plus a seed effect `--seed-sd` shared by a seed's arms, normal or t3 tails) with the
staged test (`--seeds-per-stage` x at most `--stages`, family-wise error `--alpha`) and with one-stage grids of 5,
10 and 15 seeds (the same test at one stage). Prints a table per difference (power per arm, mean trials, false
decisions at d = 0 with its 95% interval) and draws docs/staged_power.png (power and trials against d).

Last line: staged_fwer=<rate at the first difference> [<low>, <high>] power@8=<staged> trials@8=<staged>/<grid>

    python diagnostics/staged_simulation.py [--studies 1000] [--out docs/staged_power.png]
"""

from __future__ import annotations

import argparse

from tvrl_bench.cli.script import at_least, run_script, script_parser
from tvrl_bench.decisions.simulation import simulate

DIFFERENCES = (0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 15.0)
GRIDS = (5, 10, 15)


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--studies", type=int, default=1000, action=at_least(50), help="studies per point (default 1000)")
    parser.add_argument("--permutations", type=int, default=1000, action=at_least(200),
                        help="permutation samples per study (default 1000; a sweep draws 20,000)")
    parser.add_argument("--arms", type=int, default=7, action=at_least(1), help="arms besides the baseline (default 7)")
    parser.add_argument("--sd", type=float, default=4.1, action=at_least(0.1),
                        help="a seed's own spread in points (default 4.1: the credit study's paired spread / sqrt 2)")
    parser.add_argument("--seed-sd", type=float, default=2.0, action=at_least(0.0),
                        help="spread of a seed effect shared by the seed's arms (default 2.0)")
    parser.add_argument("--tails", choices=("normal", "heavy"), default="normal", help="noise tails (default normal)")
    parser.add_argument("--alpha", type=float, default=0.05, help="family-wise error rate (default 0.05)")
    parser.add_argument("--seeds-per-stage", type=int, default=5, action=at_least(1), help="seeds a stage (default 5)")
    parser.add_argument("--stages", type=int, default=3, action=at_least(1), help="most stages (default 3)")
    parser.add_argument("--differences", type=float, nargs="+", default=list(DIFFERENCES), action=at_least(0.0),
                        help="true differences to simulate, in points (default 0 2 4 6 8 10 12 15)")
    parser.add_argument("--out", default="docs/staged_power.png", help="the plot (default docs/staged_power.png)")
    return run_script(parser, run, argv)


def run(args: argparse.Namespace) -> None:
    common = dict(sd=args.sd, seed_sd=args.seed_sd, tails=args.tails, alpha=args.alpha, studies=args.studies,
                  permutations=args.permutations)
    rows = []
    print(f"{'d':>5} {'staged power':>13} {'trials':>7} " + " ".join(f"{f'grid{n} power':>12}" for n in GRIDS))
    for d in args.differences:
        effects = [d] * args.arms
        staged = simulate(effects, seeds_per_stage=args.seeds_per_stage, max_stages=args.stages, **common)
        grids = {n: simulate(effects, seeds_per_stage=n, max_stages=1, **common) for n in GRIDS}
        power = lambda r: float((r.rates["larger"]).mean())  # noqa: E731 - a share of correct decisions
        rows.append((d, staged, grids))
        print(f"{d:5.1f} {power(staged):13.3f} {staged.mean_trials:7.1f} "
              + " ".join(f"{power(grids[n]):12.3f}" for n in GRIDS))
    null = rows[0][1]
    low, high = null.family_error_interval()
    plot(rows, args)
    line = f"staged_fwer={null.family_error:.4f} [{low:.4f}, {high:.4f}] over {args.studies} studies (d={rows[0][0]:g})"
    eight = [r for r in rows if r[0] == 8.0]
    if eight:
        line += f" power@8={float(eight[0][1].rates['larger'].mean()):.3f} trials@8={eight[0][1].mean_trials:.1f}/" \
                f"{eight[0][1].grid_trials}"
    print(line)


def plot(rows, args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = [r[0] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.plot(d, [r[1].rates["larger"].mean() for r in rows], "o-", color="black",
              label=f"staged ({args.seeds_per_stage} seeds x at most {args.stages})")
    for n, style in zip(GRIDS, ("s--", "^--", "v--")):
        left.plot(d, [r[2][n].rates["larger"].mean() for r in rows], style, alpha=0.7, label=f"fixed grid, {n} seeds")
    left.axhline(args.alpha, color="grey", lw=0.8, ls=":")
    left.set_xlabel("true difference (points)")
    left.set_ylabel("share of arms decided larger")
    left.legend(fontsize=8)
    right.plot(d, [r[1].mean_trials for r in rows], "o-", color="black", label="staged")
    for n, style in zip(GRIDS, ("s--", "^--", "v--")):
        right.plot(d, [r[2][n].mean_trials for r in rows], style, alpha=0.7, label=f"fixed grid, {n} seeds")
    right.set_xlabel("true difference (points)")
    right.set_ylabel(f"trials per study ({args.arms} arms + baseline)")
    right.legend(fontsize=8)
    fig.suptitle(f"{args.studies} simulated studies a point; seed spread {args.sd:g} + shared {args.seed_sd:g} points, "
                 f"{args.tails} tails, family-wise error {args.alpha:g}", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)


if __name__ == "__main__":
    raise SystemExit(main())
