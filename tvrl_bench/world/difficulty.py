"""Difficulty: the knobs that define a toy world's scenes, and the named presets.

`Difficulty` is a frozen dataclass; `difficulty("default", max_sprites=1)` returns a preset with overrides.
DEFAULT (measured in docs/toy/world.md): 8 frames at 16 x 16, 1-2 sprites of 5-7 px moving 1 px per frame, circle or
square, 4 colours, 3 backgrounds. HARD: 8 frames at 32 x 32, 1-2 sprites of 8-10 px moving 2 px per frame,
circle, square or triangle, 6 colours, 4 backgrounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from tvrl_bench.world.palette import BACKGROUNDS, SPRITE_COLOURS
from tvrl_bench.world.vocabulary import MIN_TRIANGLE_SIZE, MOTIONS, NUMBER_WORDS, SHAPES


@dataclass(frozen=True)
class Difficulty:
    """What scenes of a toy world may contain.

    frames, height, width: video size [F, 3, H, W].
    min_sprites, max_sprites: sprites per scene (1 or 2 at the default size; at most 3).
    shapes, colours, backgrounds, motions: the vocabulary scenes draw from (colour names from palette.py).
    min_size, max_size: sprite side in pixels (inclusive range).
    speed: pixels per frame of a moving sprite.
    gap: empty pixels kept between the swept paths of two sprites.
    count_checks: add "Are there exactly two objects?" to every prompt's checks.
    """

    frames: int = 8
    height: int = 16
    width: int = 16
    min_sprites: int = 1
    max_sprites: int = 2
    shapes: tuple[str, ...] = ("circle", "square")
    colours: tuple[str, ...] = ("red", "green", "blue", "yellow")
    backgrounds: tuple[str, ...] = ("black", "white", "gray")
    motions: tuple[str, ...] = MOTIONS
    min_size: int = 5
    max_size: int = 7
    speed: int = 1
    gap: int = 1
    count_checks: bool = False
    name: str = field(default="custom", compare=False)

    def __post_init__(self) -> None:
        problems = []
        if self.frames < 2:
            problems.append(f"frames={self.frames}: need at least 2 frames to show motion")
        if not 1 <= self.min_sprites <= self.max_sprites <= max(NUMBER_WORDS):
            problems.append(
                f"min_sprites={self.min_sprites}, max_sprites={self.max_sprites}: need 1 <= min <= max <= "
                f"{max(NUMBER_WORDS)}"
            )
        if self.max_sprites > len(self.colours):
            problems.append(f"max_sprites={self.max_sprites} exceeds the {len(self.colours)} colours (sprites of a scene have distinct colours)")
        for what, given, known in (
            ("shapes", self.shapes, SHAPES),
            ("colours", self.colours, tuple(SPRITE_COLOURS)),
            ("backgrounds", self.backgrounds, tuple(BACKGROUNDS)),
            ("motions", self.motions, MOTIONS),
        ):
            unknown = [g for g in given if g not in known]
            if unknown or not given or len(set(given)) != len(given):
                problems.append(f"{what}={given}: need distinct names from {known}")
        if not 1 <= self.min_size <= self.max_size:
            problems.append(f"min_size={self.min_size}, max_size={self.max_size}: need 1 <= min_size <= max_size")
        if "triangle" in self.shapes and self.min_size < MIN_TRIANGLE_SIZE:
            problems.append(
                f"triangles need sprites of at least {MIN_TRIANGLE_SIZE} px (min_size={self.min_size}): at smaller "
                "sizes a triangle cannot be told from a circle; raise min_size or drop 'triangle'"
            )
        travel = self.speed * (self.frames - 1)
        moving = [m for m in self.motions if m != "static"]
        if self.max_size > min(self.height, self.width) or (moving and self.min_size + travel > min(self.height, self.width)):
            problems.append(
                f"sprites of {self.min_size}-{self.max_size} px travelling {travel} px do not fit in "
                f"{self.height} x {self.width}; shrink the sprites, the speed or the frames"
            )
        if self.speed < 1 or self.gap < 0:
            problems.append(f"speed={self.speed}, gap={self.gap}: need speed >= 1 and gap >= 0")
        if problems:
            raise ValueError("invalid toy-world Difficulty: " + "; ".join(problems))

    @property
    def travel(self) -> int:
        """Pixels a moving sprite travels from the first frame to the last."""
        return self.speed * (self.frames - 1)


DEFAULT = Difficulty(name="default")
HARD = Difficulty(
    height=32,
    width=32,
    shapes=("circle", "square", "triangle"),
    colours=("red", "green", "blue", "yellow", "magenta", "cyan"),
    backgrounds=("black", "white", "gray", "brown"),
    min_size=8,
    max_size=10,
    speed=2,
    name="hard",
)
PRESETS: dict[str, Difficulty] = {"default": DEFAULT, "hard": HARD}


def difficulty(name: str | Difficulty = "default", **overrides: Any) -> Difficulty:
    """A named preset ("default", "hard") or a Difficulty, with fields replaced by the non-None `overrides`.

    Sequences may be given as lists (gin passes lists); they are stored as tuples.
    """
    if isinstance(name, Difficulty):
        base = name
    elif name in PRESETS:
        base = PRESETS[name]
    else:
        raise ValueError(f"unknown toy difficulty '{name}'; presets are: {', '.join(PRESETS)}")
    fields = set(Difficulty.__dataclass_fields__) - {"name"}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(f"unknown Difficulty field(s) {unknown}; fields are: {', '.join(sorted(fields))}")
    given = {k: (tuple(v) if isinstance(v, list) else v) for k, v in overrides.items() if v is not None}
    if not given:
        return base
    return replace(base, name=f"{base.name}+custom", **given)


def from_knobs(
    name: str = "default",
    *,
    size: int | None = None,
    n_colours: int | None = None,
    n_backgrounds: int | None = None,
    **overrides: Any,
) -> Difficulty:
    """A Difficulty from gin-friendly knobs: a preset name, `size` (height = width), the first `n_colours`
    sprite colours and first `n_backgrounds` backgrounds of the palette, and any Difficulty field (None = keep).
    """
    from tvrl_bench.world.palette import BACKGROUNDS as ALL_BACKGROUNDS, SPRITE_COLOURS as ALL_SPRITE_COLOURS

    if size is not None:
        overrides.update(height=size, width=size)
    for knob, value, table in (("n_colours", n_colours, ALL_SPRITE_COLOURS), ("n_backgrounds", n_backgrounds, ALL_BACKGROUNDS)):
        if value is None:
            continue
        if not 1 <= value <= len(table):
            raise ValueError(f"{knob}={value}: the palette has {len(table)}; choose 1..{len(table)}")
        overrides["colours" if knob == "n_colours" else "backgrounds"] = tuple(table)[:value]
    return difficulty(name, **overrides)
