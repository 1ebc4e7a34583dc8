"""Which toy world a component serves, declared once: the world names, and what a policy checkpoint was trained on.

A toy trial's parts must share one world: the slot world ('slots', world/slots.py: the default profile) or the
sprite world ('sprites', the rest of world/: the toy_v1..v3 profiles). A prompt of one world means nothing to a
critic, a dataset or a policy of the other (the words differ, and so do the checks), so a trial is refused at config
time when they disagree (training/trial/world_check.py).

- A component declares the worlds it serves with a class attribute `worlds: tuple[str, ...] | None` (a registered
  function: a function attribute, set with `serves`); None means any world, or not a toy component (the real Qwen
  critics). `served_worlds(target)` reads it. A component whose world is its checkpoint's (a learned critic) also
  offers `configured_worlds(values) -> tuple[str, ...]`, which the trial's world check asks with the config's values.
- A toy policy's world comes from its checkpoint: `pretrain.json` holds `recipe.world` and `video` (frames, height,
  width). `checkpoint_world(metadata, recipe_name)` reads them; what an older checkpoint lacks is inferred: a
  recipe without `world` predates the slot world, so it is the sprite world, unless the recipe's name (a shipped
  base's) starts with 'slots'; a missing `video` is the world's default video (8 frames of 16 x 16 for both).
- A component may also declare parameters that act in one world only, `world_parameters = {'sprites': (...)}` (the
  oracle's shape and motion measures answer no slot check); one bound in the user's own config on a trial of the
  other world changes nothing and is refused.
- A toy dataset declares what its scenes would draw, `drawn(values) -> {field: (parameter, value)}` (fields of
  `policy_draws`: frames, height, width, min_size, max_size, speed); the video is the policy's, so a value that
  differs from what the policy draws would change nothing but the logged params, and is refused.
- `world_of_check(spec)`: the world a parsed check belongs to (a slot check to the slot world).
- `PROFILES`: each world's profile, the fix a mismatch suggests; `DEFAULT_WORLD` and `DEFAULT_PROFILE`: the default
  regime's world and profile, which every command's default reads from here.
- `WORLD_OBJECTS`: the size of what the pretraining worlds draw (squares of 4-5 px, sprites of 5-7 px moving 1 px
  per frame): what a policy of that world draws whatever a dataset says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from tvrl_bench.world.checks import CheckSpec
from tvrl_bench.world.difficulty import DEFAULT
from tvrl_bench.world.slots import SLOTS

SLOT_WORLD, SPRITE_WORLD = "slots", "sprites"
WORLDS: tuple[str, ...] = (SLOT_WORLD, SPRITE_WORLD)
PROFILES = {SLOT_WORLD: "components/profiles/toy.gin", SPRITE_WORLD: "components/profiles/toy_v3.gin"}
DEFAULT_WORLD = SLOT_WORLD  # the default regime's world: what a command builds or samples unless told otherwise
DEFAULT_PROFILE = PROFILES[DEFAULT_WORLD]  # the default regime's profile, the one source of its path
WORLD_WORDS = {SLOT_WORLD: "the slot world", SPRITE_WORLD: "the sprite world"}
WORLD_ADJECTIVES = {SLOT_WORLD: "slot-world", SPRITE_WORLD: "sprite-world"}
CHECK_WORDS = {world: f"{adjective} checks" for world, adjective in WORLD_ADJECTIVES.items()}


@dataclass(frozen=True)
class VideoSize:
    """A video's frames, height and width in pixels (videos[B, F, 3, H, W])."""

    frames: int
    height: int
    width: int

    def __str__(self) -> str:
        return f"{self.frames} frames of {self.height} x {self.width}"


@dataclass(frozen=True)
class WorldObjects:
    """The side in pixels of what a world's scenes draw (min_size..max_size) and, for sprites, their speed."""

    min_size: int
    max_size: int
    speed: int | None = None


DEFAULT_VIDEO = {SLOT_WORLD: VideoSize(SLOTS.frames, SLOTS.height, SLOTS.width),
                 SPRITE_WORLD: VideoSize(DEFAULT.frames, DEFAULT.height, DEFAULT.width)}
WORLD_OBJECTS = {SLOT_WORLD: WorldObjects(SLOTS.min_size, SLOTS.max_size),
                 SPRITE_WORLD: WorldObjects(DEFAULT.min_size, DEFAULT.max_size, DEFAULT.speed)}


@dataclass(frozen=True)
class CheckpointWorld:
    """What a toy policy checkpoint was trained on: its world and video size; `inferred` when its metadata did not
    say (an older checkpoint)."""

    world: str
    video: VideoSize
    inferred: bool = False


def serves(*worlds: str) -> Callable[[Any], Any]:
    """Declare the worlds a registered function serves (a class writes `worlds = (...)` in its body)."""
    unknown = [w for w in worlds if w not in WORLDS]
    if unknown or not worlds:
        raise ValueError(f"serves{worlds}: name one or more of {WORLDS}")

    def declare(target: Any) -> Any:
        target.worlds = tuple(worlds)
        return target

    return declare


def served_worlds(target: Any) -> tuple[str, ...] | None:
    """The worlds a component (class, function or instance) declares; None: any world, or not a toy component."""
    worlds = getattr(target, "worlds", None)
    if worlds is None:
        return None
    if isinstance(worlds, str) or any(w not in WORLDS for w in worlds):
        raise ValueError(f"{getattr(target, '__qualname__', target)}.worlds = {worlds!r}: name worlds of {WORLDS} "
                         "in a tuple, or None for any world")
    return tuple(worlds)


def world_parameters(target: Any) -> dict[str, tuple[str, ...]]:
    """A component's parameters that act in one world only: world -> parameter names ({} when none)."""
    declared = getattr(target, "world_parameters", None) or {}
    unknown = [w for w in declared if w not in WORLDS]
    if unknown:
        raise ValueError(f"{getattr(target, '__qualname__', target)}.world_parameters names {unknown}, not worlds "
                         f"of {WORLDS}")
    return {world: tuple(params) for world, params in declared.items()}


def checkpoint_world(metadata: Mapping[str, Any] | None, recipe_name: str | None = None) -> CheckpointWorld | None:
    """The world and video size a toy policy's pretrain.json states, or infers for an older one (see the module
    docstring); None when there is no metadata and no recipe name to go by."""
    recipe = (metadata or {}).get("recipe") or {}
    world = recipe.get("world")
    inferred = world is None
    if world is None:
        if metadata is None and recipe_name is None:
            return None
        world = SLOT_WORLD if (recipe_name or "").startswith(SLOT_WORLD) else SPRITE_WORLD
    if world not in WORLDS:
        raise ValueError(f"pretrain.json: recipe.world = {world!r} is not a world of {WORLDS}")
    video = (metadata or {}).get("video")
    if video is None:
        return CheckpointWorld(world, DEFAULT_VIDEO[world], True)
    return CheckpointWorld(world, VideoSize(int(video["frames"]), int(video["height"]), int(video["width"])), inferred)


def policy_draws(found: CheckpointWorld) -> dict[str, int]:
    """What a policy of this checkpoint draws: its video size, and the size (and speed) of its world's objects."""
    objects = WORLD_OBJECTS[found.world]
    drawn = {"frames": found.video.frames, "height": found.video.height, "width": found.video.width,
             "min_size": objects.min_size, "max_size": objects.max_size}
    return drawn if objects.speed is None else {**drawn, "speed": objects.speed}


def world_of_check(spec: CheckSpec) -> str:
    """The world a parsed check asks about: slot checks the slot world, every other kind the sprite world."""
    return SLOT_WORLD if spec.kind == "slot" else SPRITE_WORLD
