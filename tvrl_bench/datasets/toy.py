"""Toy datasets: reproducible train / eval prompt sets sharing no scene, and (prompt, video) training batches.

- `toy_prompt_set(...)`, registered as `datasets.toy`: a PromptSet of prompts with their checks. Eval prompts
  are drawn first from the seed, then train prompts whose scene signature (background and the sorted
  (colour, shape, motion) of the sprites) is not an eval one, so the eval set depends on (seed, n_eval,
  difficulty) only and the two splits share no scene.
- `training_batch(n, rng, difficulty, exclude)`: `n` random scenes with prompts, checks and rendered videos,
  for pretraining the toy policy and learned critics; pass `exclude=signatures(prompt_set.eval)` to keep
  eval scenes out of pretraining.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Iterable

import torch

from tvrl_bench.prompts import PromptItem, PromptSet
from tvrl_bench.config.rules import checked
from tvrl_bench.datasets.toy_checks import SPRITE_CHECKS, drawn_by_sprite_set
from tvrl_bench.datasets.toy_scenes import unique_descriptions
from tvrl_bench.registry import register
from tvrl_bench.world.checks import checks_for
from tvrl_bench.world.declaration import serves
from tvrl_bench.world.difficulty import DEFAULT, Difficulty, from_knobs
from tvrl_bench.world.grammar import parse_prompt, prompt_of
from tvrl_bench.world.render import render_batch
from tvrl_bench.world.scene import Rng, Scene, SceneDescription, as_random, sample_scenes


def signatures(items: Iterable[PromptItem | str]) -> frozenset[tuple]:
    """Scene signatures of prompts (PromptItems or prompt texts): what to exclude to keep a split unseen."""
    return frozenset(parse_prompt(i.prompt if isinstance(i, PromptItem) else i).signature for i in items)


def prompt_item(scene: SceneDescription | Scene, count: bool = False) -> PromptItem:
    """The PromptItem (prompt text and checks) of a scene."""
    return PromptItem(prompt_of(scene), checks_for(scene, count))


@serves("sprites")
@register("datasets", "toy")
@checked(SPRITE_CHECKS)
def toy_prompt_set(
    seed: int = 0,
    n_train: int = 512,
    n_eval: int = 64,
    difficulty: str = "default",
    size: int | None = None,
    frames: int | None = None,
    min_sprites: int | None = None,
    max_sprites: int | None = None,
    n_colours: int | None = None,
    n_backgrounds: int | None = None,
    shapes: tuple[str, ...] | None = None,
    min_size: int | None = None,
    max_size: int | None = None,
    speed: int | None = None,
    count_checks: bool | None = None,
) -> PromptSet:
    """Toy-world prompts with their checks: reproducible from a seed, train and eval sharing no scene.

    `difficulty` names a preset ("default": 16 x 16 x 8, "hard": 32 x 32 x 8); the other knobs override it
    (None keeps the preset's value; see tvrl_bench.world.difficulty.from_knobs). What the videos show (size,
    frames, min_size, max_size, speed, and the preset's) is the policy's, so a trial refuses values other than
    the policy's (datasets/toy_checks.py `drawn_by_sprite_set`).
    """
    d = from_knobs(
        difficulty, size=size, n_colours=n_colours, n_backgrounds=n_backgrounds, frames=frames,
        min_sprites=min_sprites, max_sprites=max_sprites, shapes=shapes, min_size=min_size, max_size=max_size,
        speed=speed, count_checks=count_checks,
    )
    eval_scenes = unique_descriptions(n_eval, as_random(seed), d)
    # A separate stream for train, so the eval set does not change with n_train.
    train_scenes = unique_descriptions(n_train, as_random(seed + 1_000_003), d, exclude={s.signature for s in eval_scenes})
    return PromptSet(
        name=f"toy-{d.name}",
        train=tuple(prompt_item(s, d.count_checks) for s in train_scenes),
        eval=tuple(prompt_item(s, d.count_checks) for s in eval_scenes),
        held_out=partial(held_out_eval, seed, d, frozenset(s.signature for s in train_scenes)),
    )


def held_out_eval(seed: int, difficulty: Difficulty, trained_on: frozenset[tuple], n: int) -> tuple[tuple[PromptItem, ...], int]:
    """The first n eval scenes of `seed` (the eval split drawn with n_eval = n, so it starts with the smaller
    split), less those whose signature is in `trained_on`, as PromptItems; and how many were dropped. ValueError
    when the world has fewer than n distinct scenes."""
    drawn = unique_descriptions(n, as_random(seed), difficulty)
    kept = tuple(prompt_item(s, difficulty.count_checks) for s in drawn if s.signature not in trained_on)
    return kept, len(drawn) - len(kept)


@dataclass(frozen=True)
class ToyBatch:
    """Training data: scenes, their prompts and checks, and videos[B, F, 3, H, W] in [0, 1]."""

    scenes: tuple[Scene, ...]
    prompts: tuple[str, ...]
    checks: tuple[tuple[str, ...], ...]
    videos: torch.Tensor


def training_batch(
    n: int, rng: Rng, difficulty: Difficulty = DEFAULT, exclude: Iterable[tuple] | None = None
) -> ToyBatch:
    """`n` random (prompt, checks, ground-truth video) examples; scenes with a signature in `exclude` are skipped."""
    scenes = sample_scenes(n, rng, difficulty, exclude=frozenset(exclude) if exclude else None)
    return ToyBatch(
        scenes=tuple(scenes),
        prompts=tuple(prompt_of(s) for s in scenes),
        checks=tuple(checks_for(s, difficulty.count_checks) for s in scenes),
        videos=render_batch(scenes),
    )


toy_prompt_set.drawn = drawn_by_sprite_set
