"""The sprite world dataset's (`datasets.toy`) declared checks, and what its scenes would draw.

- `SPRITE_CHECKS`: a rule per knob, and relations: the knobs make a valid world (sprites of the preset's size
  fit, triangles only where sprites are large enough, no more sprites than colours), and the world holds the
  distinct scenes that train + eval and the wide evaluation ask for (counted by drawing them, cached).
- `drawn_by_sprite_set(values)`: the video and sprites the knobs describe, by field of the policy's world
  (world/declaration.py `policy_draws`); the trial's world check refuses one that differs from the policy's.
"""

from __future__ import annotations

from tvrl_bench.config.rules import Checks, Relation, Rule, Values, integer, one_of, optional
from tvrl_bench.datasets.toy_scenes import available_scenes
from tvrl_bench.world.difficulty import PRESETS, Difficulty, from_knobs
from tvrl_bench.world.palette import BACKGROUNDS, SPRITE_COLOURS
from tvrl_bench.world.vocabulary import NUMBER_WORDS, SHAPES

MAX_SPRITES = max(NUMBER_WORDS)  # the grammar counts up to three

# The knobs that decide what a scene may hold (its prompt); the video's own (size, frames, sprite sizes, speed)
# are the policy's and left at the preset's here.
SCENE_KNOBS = ("min_sprites", "max_sprites", "n_colours", "n_backgrounds", "shapes", "count_checks")
VIDEO_KNOBS = {"frames": "frames", "height": "size", "width": "size", "min_size": "min_size", "max_size": "max_size",
               "speed": "speed"}


def _shape_names(value) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) >= 1 and len(set(value)) == len(value)
            and all(isinstance(s, str) and s in SHAPES for s in value))


def _scenes(v: Values) -> Difficulty:
    """The world the scene knobs describe (ValueError when they do not make one)."""
    knobs = {k: (tuple(v[k]) if isinstance(v[k], list) else v[k]) for k in SCENE_KNOBS}
    return from_knobs(v["difficulty"], **knobs)


def _bound(v: Values, keys) -> str:
    return ", ".join(v.binding(k) for k in keys if v[k] is not None) or v.binding("difficulty")


def _valid_world(v: Values) -> str | None:
    try:
        _scenes(v)
    except ValueError as exc:
        return f"{_bound(v, SCENE_KNOBS)}: {exc}"
    return None


def _scenes_fit(v: Values) -> str | None:
    """Train and eval share no scene, and the wide evaluation draws distinct scenes: the world must hold them."""
    try:
        world = _scenes(v)
    except ValueError:
        return None  # refused by _valid_world
    wanted, wide = v["n_train"] + v["n_eval"], v["training.trial.wide_eval_prompts"]
    found = available_scenes(max(wanted, wide), world)
    if wanted > found:
        return (f"{v.binding('n_train')} and {v.binding('n_eval')} ask for {wanted:,} distinct scenes (train and eval "
                f"share none), but the sprite world of {_bound(v, SCENE_KNOBS)} has {found:,}; ask for fewer, e.g. "
                + (f"{v.name('n_train')} = {found - v['n_eval']}" if v["n_eval"] < found else
                   f"{v.name('n_eval')} = {found // 2} and {v.name('n_train')} = {found - found // 2}"))
    if wide > found:
        return (f"{v.binding('training.trial.wide_eval_prompts')} asks for more held-out prompts than the sprite world "
                f"of {_bound(v, SCENE_KNOBS)} has scenes ({found:,}); bind it to at most {found}, e.g. "
                f"training.trial.wide_eval_prompts = {found}, or 0 (no wide evaluation)")
    return None


SPRITE_CHECKS = Checks(
    [Relation(("difficulty", *SCENE_KNOBS), _valid_world),
     Relation(("n_train", "n_eval", "difficulty", *SCENE_KNOBS, "training.trial.wide_eval_prompts"), _scenes_fit)],
    seed=integer(example="0"),
    n_train=integer(0, example="512"),
    n_eval=integer(0, example="64"),
    difficulty=one_of(*PRESETS),
    size=optional(integer(1, example="16")),
    frames=optional(integer(2, example="8", note="motion needs 2 frames")),
    min_size=optional(integer(1, example="5")),
    max_size=optional(integer(1, example="7")),
    speed=optional(integer(1, example="1")),
    min_sprites=optional(integer(1, MAX_SPRITES, example="1")),
    max_sprites=optional(integer(1, MAX_SPRITES, example="2")),
    n_colours=optional(integer(1, len(SPRITE_COLOURS), example="4")),
    n_backgrounds=optional(integer(1, len(BACKGROUNDS), example="3")),
    shapes=optional(Rule(_shape_names, f"distinct shape names of {SHAPES}", "('circle', 'square')")),
    count_checks=optional(one_of(True, False)),
)


def drawn_by_sprite_set(values: dict) -> dict[str, tuple[str, object]]:
    """field -> (the parameter that sets it, its value): the video and sprites these values describe (a knob when
    bound, else the `difficulty` preset's)."""
    preset = PRESETS.get(values.get("difficulty", "default"), PRESETS["default"])
    drawn = {}
    for field, knob in VIDEO_KNOBS.items():
        given = values.get(knob)
        drawn[field] = (knob, given) if given is not None else ("difficulty", getattr(preset, field))
    return drawn
