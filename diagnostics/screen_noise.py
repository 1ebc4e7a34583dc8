"""Credit screen a, noise-limited: does uniform credit learn more with more rollouts per step?

Routed credit acts like a larger batch, so it can only help where a larger batch helps. Per seed, this trains the
profile with uniform credit (`--credit`) for `--steps` steps twice, at the profile's rollouts per step and at
`--factor` times as many prompts per step (the same steps, learning rate and group size), and scores the base and
both final policies on the same held-out prompts with the same noise (the trial's wide evaluation, `--prompts`
prompts drawn before the trained scenes are dropped). It reports each arm's gain over the base and the paired
difference (more rollouts - fewer), with its 95% interval over seeds (over prompts with one seed). Under 2 points,
no credit map can help in this regime: change the regime first.

Last line: noise_limited_delta=<points> ci=[<low>, <high>] gain_1x=<points> gain_<factor>x=<points> seeds=<n>
steps=<n> rollouts=<1x>/<factor x> prompts=<n>

    python diagnostics/screen_noise.py [--profile components/profiles/toy.gin] [--seeds 0 1 2] [--steps 25] \\
        [--factor 4] [--prompts 1000] [--workers 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile

import gin
import torch

from tvrl_bench.cli.script import at_least, run_script, script_parser
from tvrl_bench.config import load_config
from tvrl_bench.diagnostics.screens import paired_gain

ARMS = ("base", "1x", "many")


def run_arm(files: list[str], bindings: list[str]) -> dict[str, float]:
    """Train (or, with 0 steps, only evaluate) one configuration in this process; {prompt index: evaluator score} of
    its wide evaluation, plus 'overall' (its wide_eval/overall)."""
    from tvrl_bench.training.checkpoint import CheckpointDir
    from tvrl_bench.training.loop import Trainer
    from tvrl_bench.training.processes import Processes
    from tvrl_bench.training.trial.build import build_settings

    torch.set_num_threads(1)
    try:
        settings = build_settings(load_config(files, bindings))
    finally:
        gin.clear_config()
    with tempfile.TemporaryDirectory() as folder:
        result = Trainer(settings, Processes(cpu=True), CheckpointDir(folder), None, progress=False).run()
    scores = {str(r["index"]): float(r["score"]) for r in result.wide.records}
    return {**scores, "overall": float(result.wide.metrics["overall"])}


def arm_bindings(args: argparse.Namespace, seed: int, arm: str, prompts_per_step: int) -> list[str]:
    """The bindings of one arm: the trial's seed, its steps (0 for the base) and prompts per step, the wide
    evaluation's prompts, and no evaluation or media during training."""
    steps = 0 if arm == "base" else args.steps
    per_step = prompts_per_step * (args.factor if arm == "many" else 1)
    return [*args.gin_bindings, f"training.trial.seed = {seed}", f"training.trial.steps = {steps}",
            f"training.trial.prompts_per_step = {per_step}", f"training.trial.wide_eval_prompts = {args.prompts}",
            "training.trial.eval_every = 0", "training.trial.sample_videos = 0",
            f"training.trial.checkpoint_every = {max(steps, 1)}"]


def profile_batch(files: list[str], bindings: list[str]) -> tuple[int, int]:
    """(prompts_per_step, group_size) that the configuration binds."""
    try:
        load_config(files, bindings)
        return tuple(int(gin.query_parameter(f"training.trial.{name}")) for name in ("prompts_per_step", "group_size"))
    finally:
        gin.clear_config()


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("files", nargs="*", help="gin files after the profile (presets to swap in)")
    parser.add_argument("--profile", default="components/profiles/toy.gin", help="the profile screened (default: the toy profile)")
    parser.add_argument("--gin_bindings", nargs="*", default=[], help="extra gin bindings")
    parser.add_argument("--credit", default="components/credit/uniform.gin", help="the credit preset trained (default uniform)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="trial seeds, paired (default 0 1 2)")
    parser.add_argument("--steps", type=int, default=25, action=at_least(1), help="optimizer steps of each trained arm (default 25)")
    parser.add_argument("--factor", type=int, default=4, action=at_least(2),
                        help="rollouts per step of the large arm, x the profile's (default 4)")
    parser.add_argument("--prompts", type=int, default=1000, action=at_least(1),
                        help="wide-evaluation prompts drawn before the trained scenes are dropped (default 1000)")
    parser.add_argument("--workers", type=int, default=1, action=at_least(1), help="arms trained at once, one process each (default 1)")
    return run_script(parser, screen, argv)


def screen(args: argparse.Namespace) -> None:
    files = [args.profile, *args.files, args.credit]
    per_step, group = profile_batch(files, args.gin_bindings)
    jobs = [(seed, arm) for seed in args.seeds for arm in ARMS]
    results: dict[tuple[int, str], dict[str, float]] = {}
    # spawned workers, stopped with the script (an interrupted screen leaves no trial running)
    pool = multiprocessing.get_context("spawn").Pool(min(args.workers, len(jobs)))
    try:
        pending = {key: pool.apply_async(run_arm, (files, arm_bindings(args, key[0], key[1], per_step))) for key in jobs}
        for (seed, arm), job in pending.items():
            results[seed, arm] = job.get()
            print(f"seed {seed} {arm}: wide overall {100 * results[seed, arm]['overall']:.2f}", flush=True)
    finally:
        pool.terminate()
        pool.join()
    many = f"{args.factor}x"
    for seed in args.seeds:
        base, one, lots = (100 * results[seed, a]["overall"] for a in ARMS)
        print(f"seed {seed}: base {base:.2f}, 1x {one:.2f} ({one - base:+.2f}), {many} {lots:.2f} ({lots - base:+.2f})")

    def by(arm: str) -> dict[str, float]:
        """Per seed its overall; with one seed, per prompt its score (x 100)."""
        if len(args.seeds) > 1:
            return {str(s): 100 * results[s, arm]["overall"] for s in args.seeds}
        return {k: 100 * v for k, v in results[args.seeds[0], arm].items() if k != "overall"}

    delta, gain_1x, gain_many = paired_gain(by("many"), by("1x")), paired_gain(by("1x"), by("base")), paired_gain(by("many"), by("base"))
    prompts = len(results[args.seeds[0], "base"]) - 1
    print(f"{many} - 1x: {delta.delta:+.2f} [{delta.ci_low:+.2f}, {delta.ci_high:+.2f}] "
          f"({'over seeds' if len(args.seeds) > 1 else 'over prompts, one seed'})")
    print(f"noise_limited_delta={delta.delta:+.2f} ci=[{delta.ci_low:+.2f}, {delta.ci_high:+.2f}] "
          f"gain_1x={gain_1x.delta:+.2f} gain_{many}={gain_many.delta:+.2f} seeds={len(args.seeds)} steps={args.steps} "
          f"rollouts={per_step * group}/{per_step * group * args.factor} prompts={prompts}")


if __name__ == "__main__":
    sys.exit(main())
