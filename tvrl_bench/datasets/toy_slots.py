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

from tvrl_bench.config.rules import Checks, Relation, Rule, Values, checked, integer, one_of, optional
from tvrl_bench.prompts import PromptItem, PromptSet
from tvrl_bench.registry import register
from tvrl_bench.world.declaration import serves
from tvrl_bench.world.palette import SPRITE_COLOURS
from tvrl_bench.world.scene import Rng, as_random
from tvrl_bench.world.slots import (SLOTS, SlotScene, SlotWorld, distinct_colourings, parse_slot_prompt,
                                    render_slots, sample_slot_scene, slot_checks, slot_prompt, slot_world)

# A separate stream for the train split, so the eval set does not change with n_train.
TRAIN_STREAM = 1_000_003


def slot_item(colours: tuple[str, ...], world: SlotWorld) -> PromptItem:
    """The PromptItem (prompt and one check per slot) of a colouring."""
    return PromptItem(slot_prompt(colours, world.slots), slot_checks(colours, world.slots))


def slot_signatures(items: Iterable[PromptItem | str]) -> frozenset[tuple[str, ...]]:
    """The colourings of slot prompts (PromptItems or prompt texts): what to exclude to keep a split unseen."""
    return frozenset(parse_slot_prompt(i.prompt if isinstance(i, PromptItem) else i)[0] for i in items)


def _colour_names(value) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) >= 2 and len(set(value)) == len(value)
            and all(isinstance(c, str) and c in SPRITE_COLOURS for c in value))


def _scene_count(v: Values) -> tuple[int, str]:
    """(scenes of the configured slot world, how they are counted: '6 colours ^ 4 slots')."""
    colours = v["colours"] or SLOTS.colours
    slots = (v["rows"] or SLOTS.rows) * (v["cols"] or SLOTS.cols)
    return len(colours) ** slots, f"{len(colours)} colours ^ {slots} slot{'s' if slots > 1 else ''}"


def _scenes_fit(v: Values) -> str | None:
    """Train and eval share no scene, and the wide evaluation draws distinct scenes: the world must hold them."""
    scenes, counted = _scene_count(v)
    knobs = [k for k in ("colours", "rows", "cols") if v[k] is not None]
    world = f"the slot world of {', '.join(v.binding(k) for k in knobs)}" if knobs else "the slot world"
    slots = (v["rows"] or SLOTS.rows) * (v["cols"] or SLOTS.cols)
    if v["colours"] is not None and len(v["colours"]) < len(SLOTS.colours):
        more = (f"give more colours, e.g. {v.name('colours')} = {SLOTS.colours} ({len(SLOTS.colours) ** slots:,} "
                "scenes), or ")
    elif slots < len(SLOTS.slots):
        more = f"use more slots, e.g. {v.name('rows')} = {SLOTS.rows} and {v.name('cols')} = {SLOTS.cols}, or "
    else:
        more = ""
    wanted, wide = v["n_train"] + v["n_eval"], v["training.trial.wide_eval_prompts"]
    if wanted > scenes:
        fewer = max(scenes - v["n_eval"], 0) if v["n_eval"] < scenes else None
        return (f"{v.binding('n_train')} and {v.binding('n_eval')} ask for {wanted:,} distinct scenes (train and eval "
                f"share none), but {world} has {scenes:,} ({counted}); {more}ask for fewer, e.g. "
                + (f"{v.name('n_train')} = {fewer}" if fewer is not None else
                   f"{v.name('n_eval')} = {scenes // 2} and {v.name('n_train')} = {scenes - scenes // 2}"))
    if wide > scenes:
        return (f"{v.binding('training.trial.wide_eval_prompts')} asks for more held-out prompts than {world} has "
                f"scenes ({scenes:,}: {counted}); {more}bind it to at most {scenes}, e.g. "
                f"training.trial.wide_eval_prompts = {scenes}, or 0 (no wide evaluation)")
    return None


SLOT_CHECKS = Checks(
    [Relation(("n_train", "n_eval", "colours", "rows", "cols", "training.trial.wide_eval_prompts"), _scenes_fit)],
    seed=integer(example="0"),
    n_train=integer(0, example="512"),
    n_eval=integer(0, example="64"),
    frames=optional(integer(1, example="8")),
    size=optional(integer(1, example="16")),
    min_size=optional(integer(1, example="4")),
    max_size=optional(integer(1, example="5")),
    rows=optional(one_of(1, 2, note="a slot grid of 1 or 2 rows")),
    cols=optional(one_of(1, 2, note="a slot grid of 1 or 2 columns")),
    colours=optional(Rule(_colour_names, f"2 or more distinct colour names of {tuple(SPRITE_COLOURS)}",
                          "('red', 'green', 'blue', 'yellow')")),
)


def drawn_by_slot_set(values: dict) -> dict[str, tuple[str, object]]:
    """What the slot world of these values would draw, by field of the policy's world (world/declaration.py
    `policy_draws`): field -> (the parameter that sets it, its value). The video is the policy's whatever these
    say, so the trial's world check refuses a value that differs from it."""
    size = values.get("size")
    return {"frames": ("frames", values.get("frames") or SLOTS.frames), "height": ("size", size or SLOTS.height),
            "width": ("size", size or SLOTS.width), "min_size": ("min_size", values.get("min_size") or SLOTS.min_size),
            "max_size": ("max_size", values.get("max_size") or SLOTS.max_size)}


@serves("slots")
@register("datasets", "toy_slots")
@checked(SLOT_CHECKS)
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

    rows, cols, colours: the slot grid and the squares' colours (None keeps the default world's: 2 x 2, 6 colours).
    frames, size (height and width), min_size, max_size: what the videos show, which is the policy's (its
    checkpoint's world), so a trial refuses a value other than the policy's; they are kept so that a config may
    state them."""
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


slot_prompt_set.drawn = drawn_by_slot_set
