from __future__ import annotations

import random
from collections import Counter

import pytest
import torch

from tvrl_bench.world.difficulty import DEFAULT, HARD
from tvrl_bench.world.scene import (
    SceneDescription,
    SpriteDescription,
    boxes_apart,
    ground_truth_scene,
    sample_scene,
    sample_scenes,
)


def test_sampling_is_reproducible_from_every_kind_of_seed():
    assert sample_scenes(20, 7) == sample_scenes(20, 7)
    assert sample_scenes(20, random.Random(7)) == sample_scenes(20, 7)
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    assert sample_scenes(5, g1) == sample_scenes(5, g2)
    assert sample_scenes(20, 7) != sample_scenes(20, 8)
    with pytest.raises(TypeError, match="rng must be"):
        sample_scene("seed")


@pytest.mark.parametrize("difficulty", [DEFAULT, HARD], ids=["default", "hard"])
def test_scenes_respect_the_difficulty(difficulty):
    scenes = sample_scenes(300, 0, difficulty)
    counts = Counter(len(s.sprites) for s in scenes)
    assert set(counts) == {1, 2} and min(counts.values()) > 100  # one- and two-sprite scenes about equally often
    for s in scenes:
        assert (s.frames, s.height, s.width, s.speed) == (
            difficulty.frames, difficulty.height, difficulty.width, difficulty.speed
        )
        assert s.background in difficulty.backgrounds
        assert len({sp.colour for sp in s.sprites}) == len(s.sprites)
        for i, sp in enumerate(s.sprites):
            assert sp.colour in difficulty.colours and sp.shape in difficulty.shapes
            assert difficulty.min_size <= sp.size <= difficulty.max_size
            x0, y0, x1, y1 = s.path_box(i)
            assert 0 <= x0 and 0 <= y0 and x1 <= s.width and y1 <= s.height
        if len(s.sprites) == 2:
            assert boxes_apart(s.path_box(0), s.path_box(1), gap=difficulty.gap)
    assert {sp.motion for s in scenes for sp in s.sprites} == set(difficulty.motions)


def test_path_box_covers_the_travel():
    scene = ground_truth_scene(
        SceneDescription("black", (SpriteDescription("red", "square", "right"),)), 0
    )
    sprite = scene.sprites[0]
    x0, y0, x1, y1 = scene.path_box(0)
    assert (x1 - x0, y1 - y0) == (sprite.size + 7, sprite.size)
    assert sprite.position(7, 1) == (sprite.x + 7, sprite.y)


def test_signature_ignores_sprite_order():
    a = SpriteDescription("red", "circle", "left")
    b = SpriteDescription("blue", "square", "static")
    assert SceneDescription("white", (a, b)).signature == SceneDescription("white", (b, a)).signature
    assert SceneDescription("white", (a, b)).signature != SceneDescription("black", (a, b)).signature


def test_ground_truth_matches_its_description_and_is_reproducible():
    description = SceneDescription(
        "gray", (SpriteDescription("green", "circle", "up"), SpriteDescription("yellow", "square", "down"))
    )
    scene = ground_truth_scene(description, 11)
    assert scene.description() == description
    assert ground_truth_scene(description, 11) == scene


def test_impossible_descriptions_have_clear_errors():
    crossing = SceneDescription(
        "black", (SpriteDescription("red", "square", "right"), SpriteDescription("blue", "square", "up"))
    )
    with pytest.raises(ValueError, match="cannot be laid out"):
        ground_truth_scene(crossing, 0)
    with pytest.raises(ValueError, match="outside difficulty 'default': colour 'cyan'"):
        ground_truth_scene(SceneDescription("black", (SpriteDescription("cyan", "square", "up"),)), 0)


def test_exclude_skips_signatures():
    scenes = sample_scenes(50, 1)
    banned = {scenes[0].description().signature}
    again = sample_scenes(50, 1, exclude=banned)
    assert all(s.description().signature not in banned for s in again)
