from __future__ import annotations

import pytest
import torch

from tvrl_bench.world.shapes import shape_mask


def _pattern(rows: list[str]) -> torch.Tensor:
    return torch.tensor([[c == "#" for c in row] for row in rows])


def test_small_circles_have_cut_corners():
    assert torch.equal(shape_mask("circle", 5), _pattern([".###.", "#####", "#####", "#####", ".###."]))
    assert torch.equal(shape_mask("circle", 6), _pattern(["..##..", ".####.", "######", "######", ".####.", "..##.."]))
    assert torch.equal(
        shape_mask("circle", 7),
        _pattern(["..###..", ".#####.", "#######", "#######", "#######", ".#####.", "..###.."]),
    )


def test_triangle_points_up_and_square_is_full():
    assert torch.equal(
        shape_mask("triangle", 8),
        _pattern(["...##...", "...##...", "..####..", "..####..", ".######.", ".######.", "########", "########"]),
    )
    assert bool(shape_mask("square", 6).all())


@pytest.mark.parametrize("size", range(5, 13))
def test_shapes_are_told_apart_by_fill_and_symmetry(size):
    circle, square = shape_mask("circle", size).float(), shape_mask("square", size).float()
    assert circle.mean() < 0.88 <= square.mean()
    assert torch.equal(circle, circle.flip(0)) and torch.equal(circle, circle.flip(1))
    if size >= 8:
        triangle = shape_mask("triangle", size).float()
        top, bottom = triangle[: size // 2].sum(), triangle[(size + 1) // 2 :].sum()
        assert (bottom - top) / triangle.sum() >= 0.3


def test_unknown_shape():
    with pytest.raises(ValueError, match="shapes are: circle, square, triangle"):
        shape_mask("star", 5)
