"""Gate 0: can the toy base policy do what the checks reward? Per-category scores, motion and coherence, time.

RL sharpens skills a model has; it does not teach missing ones. Before any RL run, this measures the base of the
profile's trial (the default regime's slot world unless --profile names another), built by the built trial
(tvrl_bench/training/trial/built.py): its policy, its sampler's ODE limit, its evaluator and its dataset:
- the evaluator's scores per category on the dataset's held-out eval prompts (CFG, deterministic ODE sampling, as
  the trial's evaluation samples);
- on the sprite world, the motion confusion table (asked vs detected, sprites found by colour) and how far sprites
  asked to stand still wander (the larger of their centroid's x and y ranges over the frames), and, for every
  sprite a motion check names, how far it strays from the straight path that fits it best (coherence whatever the
  motion: a static sprite drawn gliding steadily is out of range but on its path); the slot world asks no motion;
- temporal sensitivity, no sampling: the x0 error on ground truth of the policy's world with its latent frames
  shuffled and with time reversed, over the error on the real videos, at sigma 0.5-0.7 (the gate's range) and
  0.8-0.95 (the high noise where a sample's layout and motion are decided). Shuffled above 1: the model learned
  continuity; reversed above 1: it learned direction.

Last line: <metric>=<> for each of the evaluator's categories, then (sprite world) static_within_1px=<>
on_path_within_1px=<> asked_most_detected=<0|1>, then shuffled_ratio=<mean over 0.5-0.7> reversed_ratio=<...>
shuffled_ratio_high=<mean over 0.8-0.95> reversed_ratio_high=<...>

    python diagnostics/base_competence.py [--policy FOLDER] [--prompts 128] [--profile components/profiles/toy_v3.gin]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

import torch

from tvrl_bench.cli.script import UserError, at_least, run_script, script_parser
from tvrl_bench.diagnostics.profile import add_profile_arguments
from tvrl_bench.evaluators.toy_motion import motion_report
from tvrl_bench.policies.toy import ToyPolicy
from tvrl_bench.recipes.flow_matching import to_latents
from tvrl_bench.recipes.worlds import pretrain_world
from tvrl_bench.training.trial.built import BuiltTrial, build_trial
from tvrl_bench.world.checks import parse_check
from tvrl_bench.world.declaration import SPRITE_WORLD, world_of_check

GATE_SIGMAS = (0.5, 0.6, 0.7)
HIGH_SIGMAS = (0.8, 0.9, 0.95)


@torch.no_grad()
def temporal_ratios(policy: ToyPolicy, videos: torch.Tensor, prompts: list[str], sigma: float, seed: int) -> tuple[float, float]:
    """(shuffled, reversed) x0-error ratios over real for ground-truth videos[B, F, 3, H, W] at noise level sigma.

    Shuffling moves whole latent frames (the pixel frames one token spans stay together), so a ratio above 1 means
    the model relates latent frames, not that it dislikes a within-token scramble."""
    x0 = to_latents(videos)
    frames = x0.shape[2]
    groups = torch.arange(frames).reshape(-1, policy.transformer.config.patch_size_t)
    order = groups[torch.randperm(len(groups), generator=torch.Generator().manual_seed(seed))].reshape(-1)
    if torch.equal(order, torch.arange(frames)):
        order = groups.flip(0).reshape(-1)
    text, mask = policy.text_encoder(prompts)
    noise = torch.randn(x0.shape, generator=torch.Generator().manual_seed(seed))
    levels = torch.full((x0.shape[0],), sigma)

    def error(clean: torch.Tensor) -> float:
        return float(((policy.predict_x0((1 - sigma) * clean + sigma * noise, levels, text, mask) - clean) ** 2).mean())

    real = error(x0)
    return error(x0[:, :, order]) / real, error(x0.flip(2)) / real


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--policy", default=None, help="toy policy folder (default: the profile's base)")
    parser.add_argument("--prompts", type=int, default=128, action=at_least(1),
                        help="held-out eval prompts of the profile's dataset sampled (default 128)")
    parser.add_argument("--guidance", type=float, default=None, action=at_least(0),
                        help="classifier-free guidance scale (default: the profile's, 3 in every toy profile)")
    parser.add_argument("--seed", type=int, default=0, help="sampling noise and ground-truth draw seed")
    add_profile_arguments(parser)
    return run_script(parser, assess, argv)


def base_trial(args: argparse.Namespace) -> BuiltTrial:
    """The profile's trial with --policy and --guidance bound (--checkpoint's weights loaded)."""
    if args.policy is not None and not Path(args.policy).is_dir():
        raise UserError(f"--policy {args.policy}: no such folder; pass a toy policy folder (one holding its "
                        "config.json), or leave --policy out for the profile's base")
    chosen = [f"policies.toy.path = '{args.policy}'"] if args.policy is not None else []
    guidance = [f"policies.toy.guidance = {args.guidance}"] if args.guidance is not None else []
    bindings = [*args.gin_bindings, *chosen, *guidance]
    trial = build_trial([args.profile, *args.files], bindings)
    if args.checkpoint:
        trial.load_weights(args.checkpoint)
    return trial


def eval_items(trial: BuiltTrial, prompts: int) -> list:
    """The first `prompts` held-out eval prompts of the trial's dataset (its eval split when it draws no more)."""
    if trial.dataset.held_out is None:
        return list(trial.dataset.eval)[:prompts]
    try:
        return list(trial.dataset.held_out(prompts)[0])
    except ValueError as exc:  # more prompts than the world has distinct scenes
        raise UserError(f"--prompts {prompts}: {str(exc).splitlines()[0]}") from None


def motion_lines(videos: torch.Tensor, checks: list, evaluator) -> str:
    """Print the sprite world's motion confusion and coherence; their last-line fields."""
    report = motion_report(videos, checks, evaluator)
    print("motion asked (rows) vs detected (columns), sprites found by colour:")
    print(report.table())
    finite = [r for r in report.ranges if r != float("inf")]
    print(f"static sprites: {len(report.ranges)}, within 1 px {report.static_within(1.0):.2f}, median range "
          f"{statistics.median(report.ranges) if report.ranges else float('nan'):.2f} px ({len(report.ranges) - len(finite)} lost)")
    tracked = [d for d in report.deviations if d != float("inf")]
    print(f"motion-checked sprites: {len(report.deviations)}, within 1 px of a straight path "
          f"{report.on_path_within(1.0):.2f}, median deviation {statistics.median(tracked) if tracked else float('nan'):.2f} px "
          f"({len(report.deviations) - len(tracked)} seen in fewer than 3 frames)")
    return (f" static_within_1px={report.static_within(1.0):.4f} on_path_within_1px={report.on_path_within(1.0):.4f}"
            f" asked_most_detected={int(report.asked_is_most_detected())}")


def assess(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    trial = base_trial(args)
    items = eval_items(trial, args.prompts)
    prompts, checks = [i.prompt for i in items], [i.checks for i in items]
    with torch.no_grad():
        videos = trial.generate(prompts, trial.noise("eval", seed=args.seed))
    metrics, _ = trial.evaluate(videos, prompts, checks)
    print(f"base on {len(items)} eval prompts (CFG {trial.policy.guidance}, {trial.schedule.num_steps} ODE steps): "
          + ", ".join(f"{k} {v:.3f}" for k, v in metrics.items()))
    world = world_of_check(parse_check(checks[0][0]))
    motion = motion_lines(videos, checks, trial.evaluator) if world == SPRITE_WORLD else ""

    truth = pretrain_world(world).batch(args.prompts, random.Random(args.seed), frozenset())
    ratios = {}
    for sigma in GATE_SIGMAS + HIGH_SIGMAS:
        ratios[sigma] = temporal_ratios(trial.policy, truth.videos, list(truth.prompts), sigma, args.seed + 1)
        print(f"x0 error over real at sigma {sigma}: shuffled {ratios[sigma][0]:.2f}, reversed {ratios[sigma][1]:.2f}")

    def mean(sigmas: tuple[float, ...], which: int) -> float:
        return statistics.mean(ratios[s][which] for s in sigmas)

    print(" ".join(f"{k}={v:.4f}" for k, v in metrics.items()) + motion
          + f" shuffled_ratio={mean(GATE_SIGMAS, 0):.3f} reversed_ratio={mean(GATE_SIGMAS, 1):.3f}"
          + f" shuffled_ratio_high={mean(HIGH_SIGMAS, 0):.3f} reversed_ratio_high={mean(HIGH_SIGMAS, 1):.3f}")


if __name__ == "__main__":
    sys.exit(main())
