"""A trial step's time with each critic against the oracle's, measured side by side in one process.

One trainer per critic preset on the default profile (components/profiles/toy.gin: 8 prompts x 4 rollouts, window3
credit from the critic's own pixel maps, the official loss with one advantage per check; the scalar scorer with
one advantage per video, components/objectives/tvrl_official.gin, as its study trains it). The trainers take turns
step by step in a rotating order, so each sees the same machine load; the ratio of each critic's median step to
the oracle's is the figure (gate: at most 2). Also the critic alone: the median time of scoring one step's 32
rollouts (every check, forward and input gradient).

Last line: <critic>=<step ratio to toy_oracle> ... max_ratio=<the largest>.

    python benchmarks/critics.py [--steps 6] [PRESET.gin ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import gin
import torch

from tvrl_bench.cli.script import UserError, at_least, run_script, scratch, script_parser
from tvrl_bench.config import load_config
from tvrl_bench.training.trial.built import build_trial_and_trainer
from tvrl_bench.world.declaration import DEFAULT_PROFILE

ORACLE = "components/rewards/toy_oracle.gin"
CRITICS = ("components/rewards/toy_qwen_slots.gin", "components/rewards/toy_qwen_slots_weak.gin",
           "components/rewards/toy_qwen_slots_shortcut.gin", "components/rewards/toy_scorer_slots.gin")
# A critic with one score per video trains with one advantage per video (the official loss's 'video_adv' mode).
PER_VIDEO = ["components/objectives/tvrl_official.gin"]


def files_for(preset: str) -> list[str]:
    """The trainer's files: the profile, the critic, and for a scalar scorer the per-video objective."""
    per_video = "scorer" in Path(preset).stem
    return [DEFAULT_PROFILE, preset, *(PER_VIDEO if per_video else [])]


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("critics", nargs="*", default=list(CRITICS), help="critic presets timed against the oracle")
    parser.add_argument("--steps", type=int, default=6, action=at_least(1), help="timed steps per trainer (default 6)")
    return run_script(parser, benchmark, argv)


def benchmark(args: argparse.Namespace) -> None:
    presets = [ORACLE, *[c for c in args.critics if c != ORACLE]]
    for preset in presets:
        if not Path(preset).is_file():
            raise UserError(f"critic preset {preset}: no such file; name a file of components/rewards/")
        try:  # a config mistake in seconds, before the timings
            load_config(files_for(preset))
        finally:
            gin.clear_config()
    torch.set_num_threads(1)
    with scratch("tvrl-bench-critics-") as work:
        measure(presets, args.steps, work.folder)


def critic_seconds(trial, repeats: int = 3) -> float:
    """Median seconds of scoring one step's rollouts (all checks, with input gradients) with the built trial's
    critic, as its step scores them."""
    items = list(trial.dataset.train)[: trial.settings.prompts_per_step]
    group = trial.settings.group_size
    prompts = [it.prompt for it in items for _ in range(group)]
    checks = [list(it.checks) for it in items for _ in range(group)]
    videos = torch.rand(len(prompts), 8, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    grads = "pixels" in trial.reward.grad_spaces
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        trial.score(videos, prompts, checks, need_grads=grads)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(presets: list[str], steps: int, folder: Path) -> None:
    print(f"machine load (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    built = {Path(p).stem: build_trial_and_trainer(files_for(p), [], folder / Path(p).stem) for p in presets}
    trainers = {name: trainer for name, (_, trainer) in built.items()}
    for t in trainers.values():
        t.step(0)  # warm-up
    names = list(trainers)
    times: dict[str, list[float]] = {n: [] for n in names}
    for i, step in enumerate(range(1, steps + 1)):
        for name in names[i % len(names):] + names[: i % len(names)]:
            started = time.perf_counter()
            trainers[name].step(step)
            times[name].append(time.perf_counter() - started)
    oracle = statistics.median(times["toy_oracle"])
    ratios = {}
    for name in names:
        median = statistics.median(times[name])
        ratios[name] = median / oracle
        print(f"{name}: median step {median:.2f} s over {steps} steps ({ratios[name]:.2f} x toy_oracle); "
              f"scoring 32 rollouts with input gradients {critic_seconds(built[name][0]):.3f} s")
    print(f"machine load (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    others = {n: r for n, r in ratios.items() if n != "toy_oracle"}
    print(" ".join(f"{n}={r:.2f}" for n, r in others.items()) + f" max_ratio={max(others.values(), default=1.0):.2f}")


if __name__ == "__main__":
    sys.exit(main())
