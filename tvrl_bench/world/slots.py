"""The slot world: the frame cut into K fixed slots, one coloured square per slot, one check per slot.

A world built so that credit can matter: each check is decided by the pixels of its own slot, a place known
whatever the video shows, and each slot's colour is a separate part of the reward. (The sprite world's checks
share one sprite's region, and a sprite drawn in the wrong colour leaves its checks nowhere to point.)

- `SlotWorld`: the knobs (frame size, slot grid, colours, square sizes); `SLOTS` is the default, 8 frames at
  16 x 16 in a 2 x 2 grid of 8 x 8 slots, 6 colours, squares of 4-5 px on black.
- `SlotScene`: a colour per slot, and each square's size and top-left corner (inside its slot, one pixel from the
  slot's edges); the squares stand still. `SlotScene.colours` is what a prompt says, its signature.
- Prompts and checks ("red at the top left, blue at the top right, green at the bottom left and yellow at the
  bottom right"; "Is the top left object red?" per slot) come from `slot_prompt`, `parse_slot_prompt` and
  `slot_checks`; the check is a `CheckSpec` of kind "slot" (world/checks.py), so critics and the evaluator read it
  like every other check.
- `render_slots(scenes) -> video[B, F, 3, H, W]`; `slot_box(name, height, width)` is the pixel box of a slot.
The slot names of each grid are world/vocabulary.py's SLOT_NAMES, which the check parser reads too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from itertools import product

import torch

from tvrl_bench.world.checks import CheckSpec
from tvrl_bench.world.palette import BACKGROUNDS, SPRITE_COLOURS, rgb
from tvrl_bench.world.scene import Rng, ScenesExhausted, as_random
from tvrl_bench.world.vocabulary import SLOT_NAMES

_GRID_OF_NAME = {name: (grid, i) for grid, names in SLOT_NAMES.items() for i, name in enumerate(names)}


def slot_box(name: str, height: int, width: int) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1), exclusive x1 / y1: the pixels of slot `name` in a height x width frame."""
    if name not in _GRID_OF_NAME:
        raise ValueError(f"unknown slot '{name}'; slots are: {', '.join(_GRID_OF_NAME)}")
    (rows, cols), index = _GRID_OF_NAME[name]
    r, c = divmod(index, cols)
    return c * width // cols, r * height // rows, (c + 1) * width // cols, (r + 1) * height // rows


@dataclass(frozen=True)
class SlotWorld:
    """What scenes of a slot world may contain.

    frames, height, width: video size [F, 3, H, W]. rows x cols: the slot grid (a key of SLOT_NAMES).
    colours: the squares' colours (sprite colours of palette.py; slots may repeat a colour). background: one
    background colour. min_size, max_size: square side in pixels; a square keeps one empty pixel to its slot's edges.
    """

    frames: int = 8
    height: int = 16
    width: int = 16
    rows: int = 2
    cols: int = 2
    colours: tuple[str, ...] = ("red", "green", "blue", "yellow", "magenta", "cyan")
    background: str = "black"
    min_size: int = 4
    max_size: int = 5
    name: str = field(default="slots", compare=False)

    def __post_init__(self) -> None:
        problems = []
        if (self.rows, self.cols) not in SLOT_NAMES:
            problems.append(f"rows x cols = {self.rows} x {self.cols}: grids are {sorted(SLOT_NAMES)}")
        unknown = [c for c in self.colours if c not in SPRITE_COLOURS]
        if unknown or len(set(self.colours)) != len(self.colours) or len(self.colours) < 2:
            problems.append(f"colours={self.colours}: need 2 or more distinct names from {tuple(SPRITE_COLOURS)}")
        if self.background not in BACKGROUNDS:
            problems.append(f"background={self.background!r}: choose one of {tuple(BACKGROUNDS)}")
        slot = min(self.height // max(self.rows, 1), self.width // max(self.cols, 1))
        if not 1 <= self.min_size <= self.max_size <= slot - 2:
            problems.append(f"min_size={self.min_size}, max_size={self.max_size}: need 1 <= min <= max <= {slot - 2} "
                            f"(a slot is {slot} px and a square keeps one pixel to its edges)")
        if self.frames < 1:
            problems.append(f"frames={self.frames}: need at least 1")
        if problems:
            raise ValueError("invalid SlotWorld: " + "; ".join(problems))

    @property
    def slots(self) -> tuple[str, ...]:
        """The slot names, row by row."""
        return SLOT_NAMES[self.rows, self.cols]

    def scene_count(self) -> int:
        """How many distinct scenes (colour assignments) the world has."""
        return len(self.colours) ** len(self.slots)


SLOTS = SlotWorld()


@dataclass(frozen=True)
class SlotScene:
    """colours[K] per slot (in `slots` order), sizes[K] and corners[K] = (x, y) of each square's top-left pixel."""

    slots: tuple[str, ...]
    colours: tuple[str, ...]
    sizes: tuple[int, ...]
    corners: tuple[tuple[int, int], ...]
    frames: int
    height: int
    width: int
    background: str

    @property
    def signature(self) -> tuple[str, ...]:
        """What the prompt says: the colour of each slot."""
        return self.colours


def sample_slot_scene(rng: Rng, world: SlotWorld = SLOTS, colours: tuple[str, ...] | None = None) -> SlotScene:
    """A random scene (each slot's colour drawn uniformly, unless `colours` gives them), with each square's size and
    place drawn inside its slot."""
    r = as_random(rng)
    slots = world.slots
    chosen = tuple(r.choice(world.colours) for _ in slots) if colours is None else tuple(colours)
    if len(chosen) != len(slots) or any(c not in world.colours for c in chosen):
        raise ValueError(f"colours {chosen}: need one of {world.colours} for each of the {len(slots)} slots")
    sizes, corners = [], []
    for name in slots:
        x0, y0, x1, y1 = slot_box(name, world.height, world.width)
        size = r.randint(world.min_size, world.max_size)
        corners.append((r.randint(x0 + 1, x1 - 1 - size), r.randint(y0 + 1, y1 - 1 - size)))
        sizes.append(size)
    return SlotScene(slots, chosen, tuple(sizes), tuple(corners), world.frames, world.height, world.width,
                     world.background)


def distinct_colourings(n: int, rng: Rng, world: SlotWorld = SLOTS, exclude: set | frozenset = frozenset()) -> list[tuple[str, ...]]:
    """`n` distinct colourings (one colour per slot) not in `exclude`, in a random order drawn from `rng`.
    ScenesExhausted (a ValueError) when the world has fewer than n such colourings."""
    r = as_random(rng)
    pool = [c for c in product(world.colours, repeat=len(world.slots)) if c not in exclude]
    if n > len(pool):
        raise ScenesExhausted(f"the slot world has {len(pool)} scenes outside the {len(exclude)} excluded, fewer than "
                              f"the {n} asked; ask for fewer prompts or a world with more colours", len(pool))
    r.shuffle(pool)
    return pool[:n]


def slot_prompt(colours: tuple[str, ...], slots: tuple[str, ...]) -> str:
    """'red at the top left, blue at the top right, green at the bottom left and yellow at the bottom right'."""
    parts = [f"{colour} at the {slot}" for colour, slot in zip(colours, slots)]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def parse_slot_prompt(prompt: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(colours, slots) a slot prompt states; ValueError naming the part it could not read."""
    text = " ".join(prompt.strip().lower().split())
    parts = text.replace(" and ", ", ").split(", ")
    colours, slots = [], []
    for part in parts:
        colour, _, slot = part.partition(" at the ")
        if colour not in SPRITE_COLOURS or slot not in _GRID_OF_NAME:
            raise ValueError(f"slot prompt {prompt!r}: cannot read {part!r}; expected '<colour> at the <slot>' with "
                             f"colour in {list(SPRITE_COLOURS)} and slot in {list(_GRID_OF_NAME)}")
        colours.append(colour)
        slots.append(slot)
    grids = {_GRID_OF_NAME[s][0] for s in slots}
    if len(grids) != 1 or tuple(slots) != SLOT_NAMES[grids.pop()]:
        raise ValueError(f"slot prompt {prompt!r}: its slots {slots} are not one grid's slots in order "
                         f"({', '.join(' / '.join(n) for n in SLOT_NAMES.values())})")
    return tuple(colours), tuple(slots)


def slot_check_specs(colours: tuple[str, ...], slots: tuple[str, ...]) -> tuple[CheckSpec, ...]:
    """One check per slot: is its object the asked colour."""
    return tuple(CheckSpec("slot", colour=c, slot=s) for c, s in zip(colours, slots))


def slot_checks(colours: tuple[str, ...], slots: tuple[str, ...]) -> tuple[str, ...]:
    """The checks' text: 'Is the top left object red?' per slot."""
    return tuple(spec.text() for spec in slot_check_specs(colours, slots))


def misdescribe_slots(colours: tuple[str, ...], p: float, rng: random.Random, world: SlotWorld = SLOTS) -> tuple[str, ...]:
    """A noisy caption's colours: each slot's colour independently replaced, with probability p, by another of the
    world's colours drawn uniformly (errors independent between slots). Draws one uniform per slot, then a
    replacement only when corrupting, so a seed fixes every caption."""
    out = []
    for colour in colours:
        if rng.random() < p:
            colour = rng.choice([c for c in world.colours if c != colour])
        out.append(colour)
    return tuple(out)


def render_slots(scenes: list[SlotScene]) -> torch.Tensor:
    """video[B, F, 3, H, W] float32 in [0, 1]: each slot's square in its colour over the background, every frame
    alike. Scenes of one batch share (F, H, W)."""
    sizes = {(s.frames, s.height, s.width) for s in scenes}
    if len(sizes) != 1:
        raise ValueError(f"scenes of one batch must share (frames, height, width); got {sorted(sizes)}")
    frames, height, width = sizes.pop()
    image = torch.zeros(len(scenes), 3, height, width)
    for b, scene in enumerate(scenes):
        image[b] = torch.tensor(rgb(scene.background))[:, None, None]
        for colour, size, (x, y) in zip(scene.colours, scene.sizes, scene.corners):
            image[b, :, y:y + size, x:x + size] = torch.tensor(rgb(colour))[:, None, None]
    return image[:, None].expand(-1, frames, -1, -1, -1).contiguous()


def slot_world(**overrides) -> SlotWorld:
    """SLOTS with fields replaced by the non-None `overrides` (lists are stored as tuples)."""
    given = {k: (tuple(v) if isinstance(v, list) else v) for k, v in overrides.items() if v is not None}
    unknown = sorted(set(given) - (set(SlotWorld.__dataclass_fields__) - {"name"}))
    if unknown:
        raise ValueError(f"unknown SlotWorld field(s) {unknown}; fields are: "
                         f"{', '.join(sorted(set(SlotWorld.__dataclass_fields__) - {'name'}))}")
    return replace(SLOTS, name="slots+custom", **given) if given else SLOTS
