"""The words of the toy world besides colours: shapes, motions and the slot world's slot names (see palette.py for
colours).

A motion moves a sprite by `speed` pixels per frame along MOTION_STEPS[motion] = (dx, dy), image axes: x to the
right, y downwards ("up" is dy = -1).
"""

from __future__ import annotations

SHAPES: tuple[str, ...] = ("circle", "square", "triangle")

MOTIONS: tuple[str, ...] = ("static", "left", "right", "up", "down")

MOTION_STEPS: dict[str, tuple[int, int]] = {
    "static": (0, 0),
    "left": (-1, 0),
    "right": (1, 0),
    "up": (0, -1),
    "down": (0, 1),
}

# Triangles are only told apart from circles by their top-bottom asymmetry, which needs at least 8 pixels.
MIN_TRIANGLE_SIZE = 8

NUMBER_WORDS: dict[int, str] = {1: "one", 2: "two", 3: "three"}

# The slot world's slot names of each grid (rows, cols), row by row; a name says where its slot is whatever the
# frame's size. The slot world (slots.py) places its squares by them, the check parser (checks.py) reads them.
SLOT_NAMES: dict[tuple[int, int], tuple[str, ...]] = {
    (1, 1): ("middle",),
    (1, 2): ("left", "right"),
    (2, 1): ("top", "bottom"),
    (2, 2): ("top left", "top right", "bottom left", "bottom right"),
}
