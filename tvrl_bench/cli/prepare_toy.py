"""`tvrl-bench prepare-toy`: rebuild the shipped toy checkpoints (policy, learned critics) from a seed.

The toy policy's recipe is tvrl_bench.recipes.pretrain_policy.pretrain_policy; the sprite world's learned critic's
tvrl_bench.recipes.pretrain_critic.pretrain_critic, the slot world's critics' pretrain_slot_critic and
pretrain_slot_scorer (which critics: cli/prepare_toy_critics.py). Each takes (out_dir, seed, steps, progress) and
returns a summary dict. They write to `--out` (default ./toy_checkpoints/<name>); the shipped checkpoints in
tvrl_bench/assets/ are replaced only with `--overwrite-assets`. Without flags it rebuilds the default regime's
assets (the slot world's base `slots` and its critics: cli/prepare_toy_critics.py). Nothing is lost either way:
each checkpoint is built in a scratch folder beside its target and swapped in when complete, and a target that
already held files is first moved to `<target>.backup-<time>`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import Any

from tvrl_bench.cli.common import set_torch_threads
from tvrl_bench.cli.errors import UserError
from tvrl_bench.cli.prepare_toy_critics import CRITICS, VIVID, chosen_critics, critic_builder, policy_recipe

ASSETS = Path(__file__).resolve().parent.parent / "assets"
DEFAULT_OUT = Path("toy_checkpoints")


def folder_of(name: str, recipe: str) -> str:
    """The checkpoint folder's name: a critic's is its name; the policy of recipe v1 is `toy_policy`, of another
    recipe `toy_policy_<recipe>` (so `--overwrite-assets` writes where `policies.toy.base` finds it)."""
    if name != "policy":
        return name
    return "toy_policy" if recipe == "v1" else f"toy_policy_{recipe}"


def binding_of(name: str) -> str:
    """The gin parameter that points a trial at a built checkpoint."""
    return "policies.toy.path" if name == "policy" else f"rewards.{name}.path"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prepare-toy",
        help="rebuild the shipped toy policy / learned critic checkpoints from a seed",
        description=(
            "Pretrain the toy world's checkpoints from a seed, for a fixed number of steps (same seed and steps give "
            "the same weights). The policy: a tiny HunyuanVideo-1.5 transformer trained by flow matching; the "
            "default profile's base, slots (the slot world), is slots_clean (2,000 steps, 4.5 CPU-minutes) plus "
            "1,500 noisy-caption steps (5.8 CPU-minutes); the sprite world's bases take 35 CPU-minutes for recipe v1 "
            "(6,000 steps), 65 for v2 (10,000 steps), about 2 CPU-hours for v2_18k (18,000 steps) and a few minutes "
            "for the fine-tuned v2_noisy_captions, on one thread (see docs/toy/policy.md). The critics: with a slot "
            "recipe (--recipe slots) the slot world's toy_qwen_slots, toy_qwen_slots_weak, toy_qwen_slots_shortcut "
            "and toy_scorer_slots (about 29 minutes for these four, docs/toy/critics.md) and toy_qwen_slots_vivid "
            "(toy_qwen_slots' recipe with a biased labeler), or the sprite world's toy_learned (about 11 CPU-minutes). "
            "Without flags it rebuilds the default regime's assets: the slot world's base slots and its critics."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--what", choices=("policy", "critic", "all"), default="all",
        help="which checkpoints to rebuild: the toy policy, the learned critics of the recipe's world (--critic: "
        "one of them), or both (policy first)",
    )
    parser.add_argument(
        "--critic", default=None, choices=sorted(CRITICS),
        help="build this critic only (default: every critic of --recipe's world; the default regime's, the slot "
        "world's, without --recipe); a critic of the other world than --recipe's is refused",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of initialisation, data, noise and validation prompts")
    parser.add_argument(
        "--steps", type=int, default=None,
        help="optimizer steps (default: each recipe's own, the shipped checkpoints' count); a few steps give a quick smoke test",
    )
    parser.add_argument(
        "--out", type=Path, default=None,
        help=f"parent folder; the policy goes to OUT/toy_policy (OUT/toy_policy_<recipe>) and each critic to "
        f"OUT/<critic> (default: ./{DEFAULT_OUT}; use them with `policies.toy.path = 'OUT/toy_policy'` or "
        "`rewards.<critic>.path = 'OUT/<critic>'`). An existing checkpoint there is kept as a backup",
    )
    parser.add_argument(
        "--overwrite-assets", action="store_true",
        help=f"write into the package's shipped checkpoints ({ASSETS}) instead of --out; the shipped ones are moved "
        "to <name>.backup-<time> beside them first",
    )
    parser.add_argument(
        "--threads", type=int, default=1,
        help="torch CPU threads; keep 1 on a shared machine (more threads on 2 shared cores made steps far slower)",
    )
    parser.add_argument(
        "--eval-prompts", type=int, default=None,
        help="the policy's held-out prompts sampled at each validation and for the final scores (default: the "
        "recipe's 64; fewer is faster and noisier); the critics' recipes fix their own, so --what critic refuses it",
    )
    parser.add_argument(
        "--recipe", default=None,
        help="the policy's named pretraining recipe (default: the default regime's, slots, or v1 with a sprite-world "
        "--critic; tvrl_bench.recipes.pretrain_policy.RECIPES), whose "
        "world also picks the critics: v1 the first "
        "toy base (2-frame tokens, velocity loss), v2 4-frame tokens with a 1/sigma-weighted x0 loss (10,000 steps), "
        "v2_18k the same for 18,000 steps (about 2 CPU-hours), v2_noisy_captions v2_18k fine-tuned 1,500 steps on "
        "captions that name a wrong sprite colour 80%% of the time (needs v2_18k shipped); slots_clean and slots "
        "the slot world's bases (slots, the default profile's, needs slots_clean shipped)",
    )
    parser.add_argument(
        "--vivid-bias", type=float, default=None,
        help="with --critic toy_qwen_slots_vivid: its labeler's bias in [0, 1] (default the recipe's 0.9: a lure "
        "paid 0.9, the asked colour 0.7; 0.75 pays them alike, lower is lenient; docs/toy/critics.md)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars (the validation log lines stay)")
    parser.set_defaults(run=run)


def _target_root(args: argparse.Namespace) -> Path:
    """Where the checkpoints go: --out, the package's assets with --overwrite-assets, else ./toy_checkpoints."""
    if args.overwrite_assets:
        if args.out is not None:
            raise UserError("give --out or --overwrite-assets, not both")
        return ASSETS
    out = args.out if args.out is not None else DEFAULT_OUT
    if out.resolve() == ASSETS.resolve():
        raise UserError(
            f"--out {out} is the package's shipped checkpoints; pass --overwrite-assets (without --out) "
            "to replace them (they are kept as a backup), or choose another folder"
        )
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; name a folder")
    return out


def run(args: argparse.Namespace) -> int:
    if args.threads < 1:
        raise UserError(f"--threads must be >= 1, got {args.threads}")
    if args.steps is not None and args.steps < 1:
        raise UserError(f"--steps must be >= 1, got {args.steps}")
    if args.eval_prompts is not None and args.what == "critic":
        raise UserError(f"--eval-prompts {args.eval_prompts} sets the policy's held-out prompts, and --what critic "
                        "builds no policy (each critic's recipe fixes its own validation set); drop --eval-prompts, or "
                        "use --what policy or --what all")
    if args.eval_prompts is not None and not 1 <= args.eval_prompts <= 64:
        raise UserError(f"--eval-prompts must be in 1..64 (the datasets.toy eval set), got {args.eval_prompts}")
    from tvrl_bench.recipes.pretrain_policy import RECIPES

    if args.recipe is not None and args.recipe not in RECIPES:
        raise UserError(f"--recipe {args.recipe!r} is not a recipe; choose one of {', '.join(RECIPES)}")
    critics = chosen_critics(args)
    if args.vivid_bias is not None:
        _check_vivid_bias(args.vivid_bias, critics)
    recipe = policy_recipe(args)
    root = _target_root(args)
    set_torch_threads(args.threads)
    what = (["policy"] if args.what in ("policy", "all") else []) + critics
    started = time.perf_counter()
    lines = []
    for name in what:
        out_dir = root / folder_of(name, recipe)
        print(f"prepare-toy: building {'the toy policy' if name == 'policy' else name} (seed {args.seed}, "
              f"{'recipe default' if args.steps is None else args.steps} steps) -> {out_dir}", flush=True)
        t0 = time.perf_counter()
        summary, backup = build_into(out_dir, lambda scratch, name=name: _build(name, scratch, args, recipe))
        kept = f"; the previous one is kept in {backup}" if backup else ""
        lines.append(f"{name} -> {out_dir} in {_minutes(time.perf_counter() - t0)}: {describe(summary)}{kept}")
    if root != ASSETS:
        uses = " ".join(f"\"{binding_of(n)} = '{root / folder_of(n, recipe)}'\"" for n in what)
        print(f"prepare-toy: use them in a trial with --gin_bindings {uses}")
    print(f"prepare-toy done in {_minutes(time.perf_counter() - started)}")
    for line in lines:
        print(f"  {line}")
    return 0


def build_into(target: Path, build) -> tuple[dict[str, Any], Path | None]:
    """Run `build(scratch_folder)`, then swap the scratch folder in as `target`; an existing non-empty target is
    first renamed to `<target>.backup-<time>` (returned). A failed build leaves `target` untouched."""
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        summary = build(scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    backup = None
    if target.exists() and any(target.iterdir()):
        backup = target.with_name(f"{target.name}.backup-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 1
        while backup.exists():
            n += 1
            backup = target.with_name(f"{target.name}.backup-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
        target.rename(backup)
    elif target.exists():
        target.rmdir()
    scratch.rename(target)
    return summary, backup


def _check_vivid_bias(bias: float, critics: list[str]) -> None:
    """UserError unless --vivid-bias lies in [0, 1] and the vivid critic is the one built."""
    from tvrl_bench.world.vivid import check_bias

    if critics != [VIVID]:
        raise UserError(f"--vivid-bias {bias} sets the labeler of {VIVID} only; add --critic {VIVID}")
    try:
        check_bias(bias, "--vivid-bias")
    except ValueError as error:
        raise UserError(str(error).replace("=", " ", 1)) from None


def _build(name: str, out_dir: Path, args: argparse.Namespace, recipe_name: str) -> dict[str, Any]:
    progress = not args.no_progress
    if name == "policy":
        from dataclasses import replace

        from tvrl_bench.recipes.pretrain_policy import RECIPES, pretrain_policy

        recipe = RECIPES[recipe_name]
        if args.eval_prompts is not None:
            recipe = replace(recipe, n_val=args.eval_prompts, n_eval=args.eval_prompts)
        return pretrain_policy(out_dir, seed=args.seed, steps=args.steps, progress=progress, recipe=recipe)
    if args.vivid_bias is not None:  # the one recipe knob a flag sets (checked in run)
        from dataclasses import replace

        from tvrl_bench.recipes.slot_critic_recipes import RECIPES

        return critic_builder(name)(out_dir, seed=args.seed, steps=args.steps, progress=progress,
                                    recipe=replace(RECIPES[name], vivid_bias=args.vivid_bias))
    return critic_builder(name)(out_dir, seed=args.seed, steps=args.steps, progress=progress)


def describe(summary: dict[str, Any]) -> str:
    """One line of a recipe's summary: its scores (the policy's evaluator scores, the critic's validation
    accuracies), then its steps and CPU time."""
    scores = summary.get("eval", {}).get("scores") if isinstance(summary.get("eval"), dict) else None
    if scores is None:
        scores = summary.get("validation_accuracy", summary.get("measures", {}))
    parts = [f"{k} {v:.3f}" for k, v in scores.items() if isinstance(v, (int, float))]
    extra = []
    if "steps" in summary:
        extra.append(f"{summary['steps']} steps")
    cpu = summary.get("cpu_seconds", summary.get("cpu_s"))
    if isinstance(cpu, (int, float)):
        extra.append(f"{_minutes(cpu)} CPU")
    return ", ".join(parts) + (f" ({', '.join(extra)})" if extra else "")


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.1f} s"
