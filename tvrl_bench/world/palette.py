"""The toy world's colours: saturated sprite colours and the background colours, as RGB in [0, 1].

Every colour name is one word, so the grammar can parse it back. Sprite colours are saturated and at least 0.5
apart (Euclidean RGB) from each other and from every background; backgrounds are at least 0.5 apart from each
other. Difficulty presets use prefixes of these tables (the first 4 sprite colours, the first 3 backgrounds),
so the order is part of the contract: append new colours, never reorder.
"""

from __future__ import annotations

import torch

SPRITE_COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (1.0, 0.0, 0.0),
    "green": (0.0, 1.0, 0.0),
    "blue": (0.0, 0.0, 1.0),
    "yellow": (1.0, 1.0, 0.0),
    "magenta": (1.0, 0.0, 1.0),
    "cyan": (0.0, 1.0, 1.0),
    "orange": (1.0, 0.5, 0.0),
    "purple": (0.5, 0.0, 1.0),
}

BACKGROUNDS: dict[str, tuple[float, float, float]] = {
    "black": (0.0, 0.0, 0.0),
    "white": (1.0, 1.0, 1.0),
    "gray": (0.5, 0.5, 0.5),
    "brown": (0.45, 0.25, 0.05),
}

# Every named colour of the world, sprite colours first: the order of `palette_tensor()` rows.
ALL_COLOURS: tuple[str, ...] = tuple(SPRITE_COLOURS) + tuple(BACKGROUNDS)


def rgb(name: str) -> tuple[float, float, float]:
    """The RGB triple of a sprite or background colour name; an unknown name lists the known ones."""
    if name in SPRITE_COLOURS:
        return SPRITE_COLOURS[name]
    if name in BACKGROUNDS:
        return BACKGROUNDS[name]
    raise ValueError(f"unknown colour '{name}'; known colours are: {', '.join(ALL_COLOURS)}")


def palette_tensor(dtype: torch.dtype = torch.float32, device: torch.device | str | None = None) -> torch.Tensor:
    """[len(ALL_COLOURS), 3] RGB rows in the order of ALL_COLOURS."""
    return torch.tensor([rgb(n) for n in ALL_COLOURS], dtype=dtype, device=device)


def colour_index(name: str) -> int:
    """Row of `name` in `palette_tensor()`."""
    if name not in ALL_COLOURS:
        raise ValueError(f"unknown colour '{name}'; known colours are: {', '.join(ALL_COLOURS)}")
    return ALL_COLOURS.index(name)
