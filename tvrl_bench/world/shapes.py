"""Sprite geometry: which pixels of a size x size box a shape covers (crisp, no anti-aliasing).

Coordinates are pixel centres relative to the box's top-left corner: pixel (row r, column c) of the box has
centre (u, v) = (c + 0.5, r + 0.5), so the box is 0 < u, v < size.
- square: the whole box.
- circle: centres within radius size/2 - 0.25 of the box centre (the corners are cut at every size, so the fill
  ratio is 0.84 at 5 px, 0.67 at 6, 0.76 at 7, 0.69 at 8).
- triangle: apex up; row r spans a half-width of (r + 1) / 2 around the centre, the bottom row is full.
The renderer and the critics' shape templates both use `inside_shape`, the single definition.
"""

from __future__ import annotations

import torch

from tvrl_bench.world.vocabulary import SHAPES


def shape_code(shape: str) -> int:
    """Integer code of a shape (its index in SHAPES)."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape '{shape}'; shapes are: {', '.join(SHAPES)}")
    return SHAPES.index(shape)


def inside_shape(code: torch.Tensor, u: torch.Tensor, v: torch.Tensor, size: torch.Tensor) -> torch.Tensor:
    """Boolean mask of pixel centres (u, v) inside shape `code` of side `size`, all broadcast together."""
    half = size / 2
    in_box = (u > 0) & (u < size) & (v > 0) & (v < size)
    radius = half - 0.25
    circle = (u - half) ** 2 + (v - half) ** 2 <= radius**2 + 1e-6
    triangle = (u - half).abs() <= (v + 0.5) / 2 + 1e-6
    square = torch.ones_like(in_box)
    by_code = torch.where(code == shape_code("circle"), circle, torch.where(code == shape_code("square"), square, triangle))
    return in_box & by_code


def shape_mask(shape: str, size: int) -> torch.Tensor:
    """[size, size] bool: the pixels `shape` covers in its box (row-major, row 0 at the top)."""
    centres = torch.arange(size, dtype=torch.float32) + 0.5
    v, u = torch.meshgrid(centres, centres, indexing="ij")
    return inside_shape(torch.tensor(shape_code(shape)), u, v, torch.tensor(float(size)))
