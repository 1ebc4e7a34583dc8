"""Scenes: a background and one or more sprites whose swept paths do not overlap; sampling them from a seed.

Two levels:
- `SceneDescription` is what a prompt says: background, and per sprite its colour, shape and motion
  (`SpriteDescription`). Its `signature` is order-independent, so "a red circle and a blue square" and
  "a blue square and a red circle" are the same scene for train / eval splits.
- `Scene` adds what the prompt leaves open: each sprite's size and start position (top-left corner at frame 0,
  in pixels), and the video size and speed. `Scene.description()` drops them again.

Sampling (`sample_scene`, `sample_scenes`, `ground_truth_scene`) takes an int seed, a `random.Random` or a
`torch.Generator` and is reproducible from it. Sprites of one scene have distinct colours, so "the red circle"
always names one sprite. Paths are the boxes a sprite sweeps over all frames; two paths keep `difficulty.gap`
empty pixels between them, so sprites never touch in any frame.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from tvrl_bench.world.difficulty import DEFAULT, Difficulty
from tvrl_bench.world.vocabulary import MOTION_STEPS

Rng = int | random.Random | torch.Generator


class ScenesExhausted(ValueError):
    """A world has fewer distinct scenes than asked (sprite or slot world); `found` is how many it has (or how many
    the draws found, for the sprite world)."""

    def __init__(self, message: str, found: int):
        super().__init__(message)
        self.found = found


@dataclass(frozen=True)
class SpriteDescription:
    """What a prompt says about one sprite: colour, shape and motion names."""

    colour: str
    shape: str
    motion: str


@dataclass(frozen=True)
class SceneDescription:
    """What a prompt says about a scene: its background and its sprites (in the prompt's order)."""

    background: str
    sprites: tuple[SpriteDescription, ...]

    @property
    def signature(self) -> tuple:
        """Order-independent identity of the scene (sprites sorted by colour), for splits and deduplication."""
        return (self.background, tuple(sorted((s.colour, s.shape, s.motion) for s in self.sprites)))

    def sprite(self, colour: str) -> SpriteDescription | None:
        """The sprite of `colour`, or None."""
        return next((s for s in self.sprites if s.colour == colour), None)


@dataclass(frozen=True)
class Sprite:
    """One sprite: description plus size (px) and the top-left corner (x, y) of its box at frame 0."""

    colour: str
    shape: str
    motion: str
    size: int
    x: int
    y: int

    def description(self) -> SpriteDescription:
        return SpriteDescription(self.colour, self.shape, self.motion)

    def position(self, frame: int, speed: int) -> tuple[int, int]:
        """Top-left corner (x, y) of the box at `frame`."""
        dx, dy = MOTION_STEPS[self.motion]
        return self.x + dx * speed * frame, self.y + dy * speed * frame

    def path_box(self, frames: int, speed: int) -> tuple[int, int, int, int]:
        """(x0, y0, x1, y1), exclusive x1 / y1: the box swept over `frames` frames."""
        xe, ye = self.position(frames - 1, speed)
        return min(self.x, xe), min(self.y, ye), max(self.x, xe) + self.size, max(self.y, ye) + self.size


@dataclass(frozen=True)
class Scene:
    """A renderable scene: background, sprites, and the video's frames, height, width and speed (px / frame)."""

    background: str
    sprites: tuple[Sprite, ...]
    frames: int
    height: int
    width: int
    speed: int

    def description(self) -> SceneDescription:
        return SceneDescription(self.background, tuple(s.description() for s in self.sprites))

    def path_box(self, index: int) -> tuple[int, int, int, int]:
        return self.sprites[index].path_box(self.frames, self.speed)


def as_random(rng: Rng) -> random.Random:
    """A `random.Random` from an int seed, a Random (returned as is) or a torch.Generator (seeded from it)."""
    if isinstance(rng, random.Random):
        return rng
    if isinstance(rng, torch.Generator):
        return random.Random(int(torch.randint(0, 2**62, (1,), generator=rng)))
    if isinstance(rng, int):
        return random.Random(rng)
    raise TypeError(f"rng must be an int seed, random.Random or torch.Generator, got {type(rng).__name__}")


def boxes_apart(a: tuple[int, int, int, int], b: tuple[int, int, int, int], gap: int) -> bool:
    """True when boxes (x0, y0, x1, y1) have at least `gap` empty pixels between them along some axis."""
    return a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1]


def _place(
    description: SpriteDescription, size: int, placed: list[Sprite], rng: random.Random, d: Difficulty, tries: int
) -> Sprite | None:
    """A sprite of `size` whose path stays inside the frame and apart from the placed sprites' paths, or None."""
    dx, dy = MOTION_STEPS[description.motion]
    travel = d.travel
    # Start corner ranges that keep the whole path inside the frame.
    x_lo, x_hi = (travel if dx < 0 else 0), d.width - size - (travel if dx > 0 else 0)
    y_lo, y_hi = (travel if dy < 0 else 0), d.height - size - (travel if dy > 0 else 0)
    if x_hi < x_lo or y_hi < y_lo:
        return None
    for _ in range(tries):
        sprite = Sprite(description.colour, description.shape, description.motion, size,
                        rng.randint(x_lo, x_hi), rng.randint(y_lo, y_hi))
        box = sprite.path_box(d.frames, d.speed)
        if all(boxes_apart(box, other.path_box(d.frames, d.speed), d.gap) for other in placed):
            return sprite
    return None


def _realise(description: SceneDescription, rng: random.Random, d: Difficulty, tries: int) -> Scene | None:
    """Sizes and positions for `description` (one attempt of `tries` placements per sprite), or None."""
    placed: list[Sprite] = []
    for sprite in description.sprites:
        size = rng.randint(d.min_size, d.max_size)
        found = _place(sprite, size, placed, rng, d, tries)
        if found is None:
            return None
        placed.append(found)
    return Scene(description.background, tuple(placed), d.frames, d.height, d.width, d.speed)


def sample_description(rng: Rng, difficulty: Difficulty = DEFAULT, n_sprites: int | None = None) -> SceneDescription:
    """A random scene description of `n_sprites` (default: drawn) sprites; not checked for feasibility."""
    r = as_random(rng)
    d = difficulty
    n = r.randint(d.min_sprites, d.max_sprites) if n_sprites is None else n_sprites
    colours = r.sample(list(d.colours), n)
    sprites = tuple(SpriteDescription(c, r.choice(d.shapes), r.choice(d.motions)) for c in colours)
    return SceneDescription(r.choice(d.backgrounds), sprites)


def sample_scene(rng: Rng, difficulty: Difficulty = DEFAULT, max_attempts: int = 1000) -> Scene:
    """A random feasible scene: the number of sprites uniform, then the description, sizes and positions.

    An infeasible draw (paths that cannot be kept apart) is redrawn with the same number of sprites, so one- and
    two-sprite scenes stay equally likely.
    """
    r = as_random(rng)
    n = r.randint(difficulty.min_sprites, difficulty.max_sprites)
    for _ in range(max_attempts):
        scene = _realise(sample_description(r, difficulty, n), r, difficulty, tries=20)
        if scene is not None:
            return scene
    raise ValueError(f"no feasible scene in {max_attempts} attempts for {difficulty}; enlarge the frame or shrink sprites")


def sample_scenes(
    n: int, rng: Rng, difficulty: Difficulty = DEFAULT, exclude: set[tuple] | frozenset[tuple] | None = None
) -> list[Scene]:
    """`n` random scenes, skipping any whose description signature is in `exclude` (e.g. the eval split's)."""
    r = as_random(rng)
    scenes: list[Scene] = []
    skipped = 0
    while len(scenes) < n:
        scene = sample_scene(r, difficulty)
        if exclude and scene.description().signature in exclude:
            skipped += 1
            if skipped > 100 * (n + 10):
                raise ValueError("sample_scenes: almost every scene is excluded; the exclude set covers the world")
            continue
        scenes.append(scene)
    return scenes


def ground_truth_scene(
    description: SceneDescription, rng: Rng, difficulty: Difficulty = DEFAULT, max_attempts: int = 200
) -> Scene:
    """A scene matching `description`: sizes and start positions drawn from `rng` (reproducible).

    Raises ValueError when the description cannot be realised at this difficulty (for example a horizontal and a
    vertical mover at 16 x 16, or a colour / shape / background the difficulty does not have).
    """
    d = difficulty
    problems = [f"colour '{s.colour}'" for s in description.sprites if s.colour not in d.colours]
    problems += [f"shape '{s.shape}'" for s in description.sprites if s.shape not in d.shapes]
    problems += [f"motion '{s.motion}'" for s in description.sprites if s.motion not in d.motions]
    if description.background not in d.backgrounds:
        problems.append(f"background '{description.background}'")
    if len({s.colour for s in description.sprites}) != len(description.sprites):
        problems.append("two sprites of one colour")
    if problems:
        raise ValueError(f"scene {description} is outside difficulty '{d.name}': {', '.join(problems)}")
    r = as_random(rng)
    for _ in range(max_attempts):
        scene = _realise(description, r, d, tries=20)
        if scene is not None:
            return scene
    raise ValueError(
        f"scene {description} cannot be laid out at {d.height} x {d.width} with {d.min_size}-{d.max_size} px "
        f"sprites travelling {d.travel} px (paths must not overlap)"
    )
