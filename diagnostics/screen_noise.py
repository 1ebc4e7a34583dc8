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
import json
import os
import re
import sys
import time

import gin

from tvrl_bench.cli.script import Scratch, UserError, at_least, run_script, scratch, script_parser
from tvrl_bench.config import ConfigError, load_config
from tvrl_bench.diagnostics.screens import paired_gain
from tvrl_bench.world.declaration import DEFAULT_PROFILE

ARMS = ("base", "1x", "many")
# The bindings the screen makes for each arm, by the flag that sets them (a refused one is named by its flag).
FLAGS = {"training.trial.wide_eval_prompts": "--prompts", "training.trial.prompts_per_step": "--factor",
         "training.trial.steps": "--steps", "training.trial.seed": "--seeds"}


def arm_bindings(args: argparse.Namespace, seed: int, arm: str, prompts_per_step: int) -> list[str]:
    """The bindings of one arm: the trial's seed, its steps (0 for the base) and prompts per step, the wide
    evaluation's prompts, and no evaluation or media during training."""
    steps = 0 if arm == "base" else args.steps
    per_step = prompts_per_step * (args.factor if arm == "many" else 1)
    return [*args.gin_bindings, f"training.trial.seed = {seed}", f"training.trial.steps = {steps}",
            f"training.trial.prompts_per_step = {per_step}", f"training.trial.wide_eval_prompts = {args.prompts}",
            "training.trial.eval_every = 0", "training.trial.sample_videos = 0",
            f"training.trial.checkpoint_every = {max(steps, 1)}"]


def checked_profile(args: argparse.Namespace, files: list[str]) -> tuple[int, int]:
    """(prompts_per_step, group_size) that the configuration binds, once every arm's configuration is checked as
    its trial will be: --seeds distinct, --prompts within the profile's prompts, a value the screen binds refused
    in the screen's words (its flag), never as a --gin_bindings value the user did not give."""
    from tvrl_bench.training.trial.checks import check_values

    if len(set(args.seeds)) != len(args.seeds):
        distinct = list(dict.fromkeys(args.seeds))
        distinct += [s for s in range(max(distinct) + len(args.seeds) + 1) if s not in distinct][:len(args.seeds) - len(distinct)]
        raise UserError(f"--seeds {' '.join(map(str, args.seeds))}: give distinct seeds (each trains its arms once, "
                        f"and they are paired by seed), e.g. --seeds {' '.join(map(str, distinct))}")
    try:
        load_config(files, args.gin_bindings)
        per_step, group, final = (int(gin.query_parameter(f"training.trial.{name}"))
                                  for name in ("prompts_per_step", "group_size", "eval_prompts"))
    finally:
        gin.clear_config()
    if args.prompts < final:
        raise UserError(f"--prompts {args.prompts}: the profile's final evaluation already scores {final} prompts "
                        f"(training.trial.eval_prompts), which the wide one scores among its own; give {final} or "
                        f"more, e.g. --prompts {final}")
    for arm in ARMS:
        try:
            check_values(load_config(files, arm_bindings(args, args.seeds[0], arm, per_step)))
        except ConfigError as exc:
            raise UserError(in_flags(str(exc), args)) from None
        finally:
            gin.clear_config()
    return per_step, group


def in_flags(message: str, args: argparse.Namespace) -> str:
    """A config refusal of a value the screen bound, named by the screen's flag; other refusals as they are."""
    found = re.match(r"--gin_bindings: (training\.trial\.\w+) = (\S+?):? (.*)$", message, re.DOTALL)
    if found is None or found.group(1) not in FLAGS or any(found.group(1) in b for b in args.gin_bindings):
        return message
    name, value, rest = found.groups()
    flag = FLAGS[name]
    if name == "training.trial.wide_eval_prompts" and (most := re.search(r"; bind it to at most (\d+)", rest)):
        why = rest[: most.start()].removeprefix("asks for ")
        return f"{flag} {args.prompts}: {why}; give at most {most.group(1)}, e.g. {flag} {most.group(1)}"
    given = getattr(args, flag[2:])
    return f"{flag} {' '.join(map(str, given)) if isinstance(given, list) else given} sets {name} = {value}: {rest}"


def start_arm(work: Scratch, key: tuple[int, str], files: list[str], bindings: list[str]):
    """Start one arm in its own process (tvrl_bench/diagnostics/noise_arm.py), its files in the scratch folder."""
    folder = work.folder / f"seed{key[0]}_{key[1]}"
    folder.mkdir()
    spec = {"files": files, "bindings": bindings, "folder": str(folder / "checkpoint"),
            "result": str(folder / "result.json")}
    (folder / "spec.json").write_text(json.dumps(spec))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with open(folder / "arm.log", "w") as log:  # its output, read back only if it fails
        process = work.start([sys.executable, "-m", "tvrl_bench.diagnostics.noise_arm", str(folder / "spec.json")],
                             stdout=log, stderr=log, env=env)
    return process, folder


def arm_result(key: tuple[int, str], process, folder) -> dict[str, float]:
    if process.returncode != 0:
        lines = (folder / "arm.log").read_text(errors="replace").strip().splitlines()
        raise RuntimeError(f"arm {key[1]} of seed {key[0]} failed (exit {process.returncode}): "
                           f"{lines[-1] if lines else 'no output'}")
    return json.loads((folder / "result.json").read_text())


def train_arms(args: argparse.Namespace, files: list[str], per_step: int) -> dict[tuple[int, str], dict[str, float]]:
    """Every arm's wide-evaluation scores, `--workers` arms at a time, each in its own process (stopped, and the
    scratch folder removed, however the screen ends)."""
    waiting = [(seed, arm) for seed in args.seeds for arm in ARMS]
    results, running = {}, {}
    with scratch("tvrl-screen-noise-") as work:
        while waiting or running:
            while waiting and len(running) < args.workers:
                key = waiting.pop(0)
                running[key] = start_arm(work, key, files, arm_bindings(args, *key, per_step))
            for key, (process, folder) in list(running.items()):
                if process.poll() is not None:
                    del running[key]
                    results[key] = arm_result(key, process, folder)
                    print(f"seed {key[0]} {key[1]}: wide overall {100 * results[key]['overall']:.2f}", flush=True)
            time.sleep(0.2)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("files", nargs="*", help="gin files after the profile (presets to swap in)")
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help=f"the profile screened (default: {DEFAULT_PROFILE})")
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
    per_step, group = checked_profile(args, files)  # before any arm is trained
    results = train_arms(args, files, per_step)
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
