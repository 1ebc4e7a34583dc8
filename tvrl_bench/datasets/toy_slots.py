"""The slot world's datasets: reproducible train / eval prompt sets sharing no scene, and training batches.

- `slot_prompt_set(...)`, registered as `datasets.toy_slots`: a PromptSet of slot prompts ("red at the top left,
  ...") with one check per slot. Eval colourings are drawn first from the seed, then train colourings that are
  not eval ones, so the eval set depends on (seed, n_eval, world) only; `held_out(n)` draws the first n eval
  colourings as if n_eval were n, less the trained ones (the wide evaluation's prompts). The default world has
  6^4 = 1,296 scenes.
- `slot_training_batch(n, rng, world, exclude)`: n random scenes with prompts, checks and rendered videos, for
  pretraining the policy; pass `exclude=slot_signatures(prompt_set.eval)` to keep eval scenes out.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Iterable

import torch

from tvrl_bench.config.rules import Checks, checked, integer
from tvrl_bench.prompts import PromptItem, PromptSet
from tvrl_bench.registry import register
from tvrl_bench.world.scene import Rng, as_random
from tvrl_bench.world.slots import (SlotScene, SlotWorld, distinct_colourings, parse_slot_prompt, render_slots,
                                    sample_slot_scene, slot_checks, slot_prompt, slot_world)

# A separate stream for the train split, so the eval set does not change with n_train.
TRAIN_STREAM = 1_000_003


def slot_item(colours: tuple[str, ...], world: SlotWorld) -> PromptItem:
    """The PromptItem (prompt and one check per slot) of a colouring."""
    return PromptItem(slot_prompt(colours, world.slots), slot_checks(colours, world.slots))


def slot_signatures(items: Iterable[PromptItem | str]) -> frozenset[tuple[str, ...]]:
    """The colourings of slot prompts (PromptItems or prompt texts): what to exclude to keep a split unseen."""
    return frozenset(parse_slot_prompt(i.prompt if isinstance(i, PromptItem) else i)[0] for i in items)


@register("datasets", "toy_slots")
@checked(Checks(n_train=integer(0, example="512"), n_eval=integer(0, example="64")))
def slot_prompt_set(
    seed: int = 0,
    n_train: int = 512,
    n_eval: int = 64,
    frames: int | None = None,
    size: int | None = None,
    rows: int | None = None,
    cols: int | None = None,
    colours: tuple[str, ...] | None = None,
    min_size: int | None = None,
    max_size: int | None = None,
) -> PromptSet:
    """Slot-world prompts with their checks: reproducible from a seed, train and eval sharing no scene.

    The knobs override the default world (None keeps its value; `size` sets height and width)."""
    world = slot_world(frames=frames, height=size, width=size, rows=rows, cols=cols, colours=colours,
                       min_size=min_size, max_size=max_size)
    eval_colourings = distinct_colourings(n_eval, as_random(seed), world)
    train_colourings = distinct_colourings(n_train, as_random(seed + TRAIN_STREAM), world, exclude=set(eval_colourings))
    return PromptSet(
        name=f"toy-{world.name}",
        train=tuple(slot_item(c, world) for c in train_colourings),
        eval=tuple(slot_item(c, world) for c in eval_colourings),
        held_out=partial(held_out_slots, seed, world, frozenset(train_colourings)),
    )


def held_out_slots(seed: int, world: SlotWorld, trained_on: frozenset, n: int) -> tuple[tuple[PromptItem, ...], int]:
    """The first n eval colourings of `seed` (the eval split drawn with n_eval = n, so it starts with the smaller
    split), less the trained ones, as PromptItems; and how many were dropped. ValueError when the world has fewer
    than n scenes."""
    drawn = distinct_colourings(n, as_random(seed), world)
    kept = tuple(slot_item(c, world) for c in drawn if c not in trained_on)
    return kept, len(drawn) - len(kept)


@dataclass(frozen=True)
class SlotBatch:
    """Training data: scenes, their prompts and checks, and videos[B, F, 3, H, W] in [0, 1]."""

    scenes: tuple[SlotScene, ...]
    prompts: tuple[str, ...]
    checks: tuple[tuple[str, ...], ...]
    videos: torch.Tensor


def slot_training_batch(n: int, rng: Rng, world: SlotWorld, exclude: Iterable[tuple[str, ...]] | None = None) -> SlotBatch:
    """`n` random (prompt, checks, ground-truth video) examples; colourings in `exclude` are redrawn."""
    r = as_random(rng)
    excluded = frozenset(exclude or ())
    if len(excluded) >= world.scene_count():
        raise ValueError("slot_training_batch: every scene of the world is excluded")
    scenes = []
    while len(scenes) < n:
        scene = sample_slot_scene(r, world)
        if scene.colours not in excluded:
            scenes.append(scene)
    return SlotBatch(tuple(scenes), tuple(slot_prompt(s.colours, s.slots) for s in scenes),
                     tuple(slot_checks(s.colours, s.slots) for s in scenes), render_slots(scenes))
