"""Which critics `tvrl-bench prepare-toy` builds, and their recipes.

Every learned toy critic belongs to one world, the one its registered class declares (`worlds`, world/declaration.py):
the sprite world's `toy_learned`, the slot world's answer-likelihood critics (`toy_qwen_slots`, its weak, shortcut
and vivid-biased versions) and scalar scorer (`toy_scorer_slots`). A policy recipe belongs to one world too
(tvrl_bench.recipes.pretrain_policy.RECIPES: v1, v2, ... the sprite world; slots, slots_clean the slot world).
`--critic` picks one critic; without it, the world of `--recipe` picks them all, and without either the default
regime's world (`DEFAULT_WORLD`, the slot world): a bare `prepare-toy` rebuilds the default regime's base and
critics. A critic of one world with a recipe of the other is a UserError.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

from tvrl_bench.cli.errors import UserError

# The critics prepare-toy builds; the folder of tvrl_bench/assets/ (and of --out) is the critic's name, and its world
# is its registered class's (`critic_world`).
CRITICS = ("toy_learned", "toy_qwen_slots", "toy_qwen_slots_weak", "toy_qwen_slots_shortcut", "toy_qwen_slots_vivid",
           "toy_scorer_slots")
VIVID = "toy_qwen_slots_vivid"  # the critic whose labeler's bias --vivid-bias sets


def world_recipe(world: str) -> str:
    """The policy recipe a world rebuilds unless --recipe says: the default profile's base for the slot world, the
    first base for the sprite world. (The world package is imported here, not at the top: `--help` loads no torch.)"""
    from tvrl_bench.world.declaration import SLOT_WORLD, SPRITE_WORLD

    return {SLOT_WORLD: "slots", SPRITE_WORLD: "v1"}[world]


def critic_world(name: str) -> str:
    """The one world critic `name` serves, as its registered class `rewards.<name>` declares it."""
    from tvrl_bench import registry
    from tvrl_bench.world.declaration import served_worlds

    registry.import_components()
    (world,) = served_worlds(registry.get(f"rewards.{name}").target)
    return world


def recipe_world(recipe: str) -> str:
    """The world a policy recipe trains on ('sprites' or 'slots')."""
    from tvrl_bench.recipes.pretrain_policy import RECIPES

    return RECIPES[recipe].world


def chosen_critics(args: argparse.Namespace) -> list[str]:
    """The critics to build for these flags (see the module docstring); UserError on a world mismatch."""
    from tvrl_bench.world.declaration import DEFAULT_WORLD, WORLD_ADJECTIVES

    if args.critic is not None and args.what == "policy":
        raise UserError(f"--critic {args.critic} picks a critic to build; --what policy builds none (use --what "
                        "critic or --what all)")
    if args.critic is not None and args.recipe is not None:
        theirs, world = critic_world(args.critic), recipe_world(args.recipe)
        if theirs != world:
            raise UserError(
                f"--critic {args.critic} is a {WORLD_ADJECTIVES[theirs]} critic but --recipe {args.recipe} is a "
                f"{WORLD_ADJECTIVES[world]} recipe; drop one of them, or pick a {WORLD_ADJECTIVES[world]} critic "
                f"({', '.join(c for c in CRITICS if critic_world(c) == world)})")
    if args.what == "policy":
        return []
    if args.critic is not None:
        return [args.critic]
    world = recipe_world(args.recipe) if args.recipe is not None else DEFAULT_WORLD
    return [c for c in CRITICS if critic_world(c) == world]


def policy_recipe(args: argparse.Namespace) -> str:
    """The policy recipe: --recipe, else the recipe of --critic's world, else the default regime's (`world_recipe`)."""
    from tvrl_bench.world.declaration import DEFAULT_WORLD

    if args.recipe is not None:
        return args.recipe
    return world_recipe(critic_world(args.critic) if args.critic is not None else DEFAULT_WORLD)


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
