from __future__ import annotations

import pytest

from tvrl_bench.world.difficulty import DEFAULT, HARD, Difficulty, difficulty, from_knobs


def test_default_matches_the_measured_setting():
    assert (DEFAULT.frames, DEFAULT.height, DEFAULT.width) == (8, 16, 16)
    assert (DEFAULT.min_size, DEFAULT.max_size, DEFAULT.speed) == (5, 7, 1)
    assert DEFAULT.shapes == ("circle", "square")
    assert len(DEFAULT.colours) == 4 and len(DEFAULT.backgrounds) == 3
    assert (DEFAULT.min_sprites, DEFAULT.max_sprites) == (1, 2)


def test_hard_is_32_pixels_with_triangles():
    assert (HARD.height, HARD.width) == (32, 32)
    assert "triangle" in HARD.shapes and HARD.min_size >= 8


def test_triangles_need_eight_pixel_sprites():
    with pytest.raises(ValueError, match="triangles need sprites of at least 8 px"):
        Difficulty(shapes=("circle", "triangle"))


def test_sprites_that_cannot_travel_inside_the_frame_are_rejected():
    with pytest.raises(ValueError, match="do not fit"):
        Difficulty(min_size=10, max_size=12)


def test_overrides_and_knobs():
    one = difficulty("default", max_sprites=1, shapes=["circle"])
    assert one.max_sprites == 1 and one.shapes == ("circle",)
    assert difficulty("default") is DEFAULT
    knobs = from_knobs("default", size=32, n_colours=6, n_backgrounds=4)
    assert (knobs.height, knobs.width) == (32, 32)
    assert knobs.colours == ("red", "green", "blue", "yellow", "magenta", "cyan")
    assert knobs.backgrounds[-1] == "brown"
    with pytest.raises(ValueError, match="unknown toy difficulty 'easy'"):
        difficulty("easy")
    with pytest.raises(ValueError, match="unknown Difficulty field"):
        difficulty("default", sprites=3)
    with pytest.raises(ValueError, match="n_colours=9"):
        from_knobs(n_colours=9)
