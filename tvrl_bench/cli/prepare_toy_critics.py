"""Which critics `tvrl-bench prepare-toy` builds, and their recipes.

Every learned toy critic belongs to one world: the sprite world's `toy_learned`, the slot world's answer-likelihood
critics (`toy_qwen_slots`, its weak and shortcut versions) and scalar scorer (`toy_scorer_slots`). A policy recipe
belongs to one world too (tvrl_bench.recipes.pretrain_policy.RECIPES: v1, v2, ... the sprite world; slots,
slots_clean the slot world). `--critic` picks one critic; without it, `--recipe`'s world picks them all (the sprite
world, toy_learned, when neither is given). A critic of one world with a recipe of the other is a UserError.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

from tvrl_bench.cli.errors import UserError

# critic -> its world; the folder of tvrl_bench/assets/ (and of --out) is the critic's name.
CRITIC_WORLDS = {"toy_learned": "sprites", "toy_qwen_slots": "slots", "toy_qwen_slots_weak": "slots",
                 "toy_qwen_slots_shortcut": "slots", "toy_qwen_slots_vivid": "slots", "toy_scorer_slots": "slots"}
VIVID = "toy_qwen_slots_vivid"  # the critic whose labeler's bias --vivid-bias sets
WORLD_WORDS = {"sprites": "sprite-world", "slots": "slot-world"}


def recipe_world(recipe: str) -> str:
    """The world a policy recipe trains on ('sprites' or 'slots')."""
    from tvrl_bench.recipes.pretrain_policy import RECIPES

    return RECIPES[recipe].world


def chosen_critics(args: argparse.Namespace) -> list[str]:
    """The critics to build for these flags (see the module docstring); UserError on a world mismatch."""
    if args.critic is not None and args.what == "policy":
        raise UserError(f"--critic {args.critic} picks a critic to build; --what policy builds none (use --what "
                        "critic or --what all)")
    if args.critic is not None and args.recipe is not None:
        critic_world, world = CRITIC_WORLDS[args.critic], recipe_world(args.recipe)
        if critic_world != world:
            raise UserError(
                f"--critic {args.critic} is a {WORLD_WORDS[critic_world]} critic but --recipe {args.recipe} is a "
                f"{WORLD_WORDS[world]} recipe; drop one of them, or pick a {WORLD_WORDS[world]} critic "
                f"({', '.join(c for c, w in CRITIC_WORLDS.items() if w == world)})")
    if args.what == "policy":
        return []
    if args.critic is not None:
        return [args.critic]
    world = recipe_world(args.recipe) if args.recipe is not None else "sprites"
    return [c for c, w in CRITIC_WORLDS.items() if w == world]


def policy_recipe(args: argparse.Namespace) -> str:
    """The policy recipe: --recipe, else the world's first (v1, or slots when --critic is a slot critic)."""
    if args.recipe is not None:
        return args.recipe
    return "slots" if args.critic is not None and CRITIC_WORLDS[args.critic] == "slots" else "v1"


def critic_builder(name: str) -> Callable[..., dict[str, Any]]:
    """`build(out_dir, seed=, steps=, progress=) -> summary` of critic `name`."""
    if name == "toy_learned":
        from tvrl_bench.recipes.pretrain_critic import pretrain_critic

        return pretrain_critic
    if name == "toy_scorer_slots":
        from tvrl_bench.recipes.pretrain_slot_scorer import pretrain_slot_scorer

        return pretrain_slot_scorer
    from tvrl_bench.recipes.pretrain_slot_critic import pretrain_slot_critic

    return lambda out_dir, **kw: pretrain_slot_critic(name, Path(out_dir), **kw)
