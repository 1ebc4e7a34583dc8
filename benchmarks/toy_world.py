"""Toy-world figures: the exact evaluator on reference videos, the oracle's agreement, and their speed.

Run: python benchmarks/toy_world.py [--n 256] [--seed 0]. Prints
- evaluator `overall` (and categories) on rendered ground truth, ground truth paired with the wrong prompt,
  uniform noise, blank (black and gray) videos, the correct background alone, and a 3x3 box blur of the truth;
- the oracle's mean reward (mean log p(Yes) over each prompt's checks) on the same videos;
- render, evaluator and oracle (32 pairs, forward + backward) timings, one thread.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from tvrl_bench.cli.script import UserError, at_least, run_script, script_parser
from tvrl_bench.rewards.toy_oracle import ToyOracle
from tvrl_bench.datasets.toy import toy_prompt_set
from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.world.grammar import parse_prompt
from tvrl_bench.world.palette import rgb
from tvrl_bench.world.render import ground_truth_videos, render_batch
from tvrl_bench.world.scene import sample_scenes


def reference_videos(prompts: list[str], seed: int) -> dict[str, torch.Tensor]:
    truth = ground_truth_videos(prompts, seed)
    background = torch.tensor([rgb(parse_prompt(p).background) for p in prompts])[:, None, :, None, None]
    blur = torch.nn.functional.avg_pool2d(truth.flatten(0, 1), 3, stride=1, padding=1, count_include_pad=False)
    return {
        "ground truth": truth,
        "wrong prompt": torch.roll(truth, 1, dims=0),
        "noise": torch.rand(truth.shape, generator=torch.Generator().manual_seed(seed)),
        "blank black": torch.zeros_like(truth),
        "blank gray": torch.full_like(truth, 0.5),
        "background only": background.expand_as(truth).contiguous(),
        "3x3 blur": blur.view_as(truth),
    }


def best_of(fn, repeats: int = 20) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--n", type=int, default=256, action=at_least(1), help="eval prompts (default 256)")
    parser.add_argument("--seed", type=int, default=0, help="prompt and noise seed (default 0)")
    return run_script(parser, figures, argv)


def figures(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    try:
        items = toy_prompt_set(seed=args.seed, n_train=0, n_eval=args.n).eval
    except ValueError as exc:  # more prompts than the world has distinct scenes
        raise UserError(f"--n {args.n}: {str(exc).splitlines()[0]}") from None
    prompts, checks = [i.prompt for i in items], [i.checks for i in items]
    evaluator, oracle = ToyEvaluator(), ToyOracle()
    print(f"{args.n} eval prompts, seed {args.seed}")
    print(f"{'videos':<16} {'overall':>8} {'object':>7} {'attrib':>7} {'motion':>7} {'backgr':>7} {'oracle R':>9}")
    for name, videos in reference_videos(prompts, args.seed + 1).items():
        m = evaluator.evaluate(videos, prompts, checks)
        with torch.no_grad():
            scores, mask = oracle.score(videos, prompts, checks), oracle.score_mask(checks)
        reward = float(((scores * mask).sum(1) / mask.sum(1)).mean())
        print(f"{name:<16} {m['overall']:>8.3f} {m['object']:>7.3f} {m['attribute']:>7.3f} {m['motion']:>7.3f} "
              f"{m['background']:>7.3f} {reward:>9.3f}")

    scenes = sample_scenes(1000, args.seed)
    print(f"render 1000 scenes (16 x 16 x 8): {1000 * best_of(lambda: render_batch(scenes), 3):.0f} ms CPU")
    truth = ground_truth_videos(prompts[:64], args.seed)
    print(f"evaluator, 64 videos: {1000 * best_of(lambda: evaluator.evaluate(truth, prompts[:64], checks[:64]), 3):.0f} ms CPU")
    index, pair_prompts, questions, _ = oracle.pairs(truth, prompts[:64], checks[:64])
    pairs = truth[index[:32]].clone().requires_grad_(True)

    def oracle_step() -> None:
        oracle.score_pairs(pairs, pair_prompts[:32], questions[:32]).sum().backward()

    print(f"toy_oracle, 32 pairs forward + backward: {1000 * best_of(oracle_step):.1f} ms CPU")


if __name__ == "__main__":
    sys.exit(main())
