from __future__ import annotations

import itertools

import pytest
import torch

from tvrl_bench.world.palette import ALL_COLOURS, BACKGROUNDS, SPRITE_COLOURS, colour_index, palette_tensor, rgb


def _distance(a: str, b: str) -> float:
    return sum((x - y) ** 2 for x, y in zip(rgb(a), rgb(b))) ** 0.5


def test_sprite_colours_are_far_from_each_other_and_from_backgrounds():
    for a, b in itertools.combinations(SPRITE_COLOURS, 2):
        assert _distance(a, b) >= 0.5 - 1e-9, (a, b)
    for a in SPRITE_COLOURS:
        for b in BACKGROUNDS:
            assert _distance(a, b) >= 0.5 - 1e-9, (a, b)
    for a, b in itertools.combinations(BACKGROUNDS, 2):
        assert _distance(a, b) >= 0.5 - 1e-9, (a, b)


def test_names_are_single_words_and_tensor_follows_their_order():
    assert all(name.isalpha() for name in ALL_COLOURS)
    table = palette_tensor()
    assert table.shape == (len(ALL_COLOURS), 3)
    assert torch.equal(table[colour_index("gray")], torch.tensor([0.5, 0.5, 0.5]))


def test_unknown_colour_lists_the_known_ones():
    with pytest.raises(ValueError, match="known colours are: red"):
        rgb("teal")
