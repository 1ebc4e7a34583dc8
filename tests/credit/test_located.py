"""The located positive control on hand-made scenes: weight exactly on the named sprite's tokens, the whole video
where it is absent, and routed with the step's checks."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.credit.located import LocatedRouter, palette_labels
from tvrl_bench.credit.weights import PER_CHECK, route
from tvrl_bench.tokens import TokenGrid
from tvrl_bench.world.render import render_batch
from tvrl_bench.world.scene import Scene, Sprite

PIXEL_GRID = TokenGrid(latent_patch=(1, 1, 1), pixel_patch=(1, 1, 1))
GRID_2x2 = TokenGrid(latent_patch=(1, 1, 1), pixel_patch=(1, 2, 2))


def scene() -> Scene:
    """A static red square at (2, 2)-(6, 6) and a static blue circle at (10, 10)-(14, 14) on black, 16 x 16 x 4."""
    return Scene("black", (Sprite("red", "square", "static", 4, 2, 2), Sprite("blue", "circle", "static", 4, 10, 10)),
                 frames=4, height=16, width=16, speed=1)


def test_the_named_sprites_tokens_carry_all_the_weight_of_its_check():
    video = render_batch([scene()])
    router = LocatedRouter().given_checks([["Is there a red square?"]])
    w = router(None, video, PIXEL_GRID)  # [1, 4, 16, 16]
    red = torch.zeros(4, 16, 16, dtype=torch.bool)
    red[:, 2:6, 2:6] = True
    assert torch.all(w[0][~red] == 0)
    assert torch.allclose(w[0][red], torch.full((int(red.sum()),), 16 * 16 / 16.0))  # mean 1: 256 px / 16 red px


def test_pooled_to_2x2_tokens_the_weight_is_on_exactly_the_tokens_the_sprite_covers():
    video = render_batch([scene()])
    w = LocatedRouter().given_checks([["Does the blue circle stand still?"]])(None, video, GRID_2x2)  # [1, 4, 8, 8]
    covered = torch.zeros(8, 8, dtype=torch.bool)
    covered[5:7, 5:7] = True  # pixels 10..13 -> tokens 5, 6
    assert torch.all(w[0][:, ~covered] == 0) and torch.all(w[0][:, covered] > 0)
    assert torch.isclose(w.mean(), torch.tensor(1.0))


def test_an_absent_object_gets_the_whole_video_and_the_background_its_own_pixels():
    video = render_batch([scene()])
    absent = LocatedRouter().given_checks([["Is there a green circle?"]])(None, video, PIXEL_GRID)
    assert torch.allclose(absent, torch.ones_like(absent))
    background = LocatedRouter().given_checks([["Is the background black?"]])(None, video, PIXEL_GRID)
    sprites = palette_labels(video, 0.3)[0] != 8  # index 8: black, the first background colour
    assert torch.all(background[0][sprites] == 0) and torch.all(background[0][~sprites] > 0)


def test_checks_are_combined_as_the_mean_of_their_maps_and_padding_is_left_out():
    video = render_batch([scene(), scene()])
    checks = [["Is there a red square?", "Is there a blue circle?"], ["Is there a red square?"]]
    mask = torch.tensor([[True, True], [True, False]])
    weights = route(LocatedRouter(), None, video, PIXEL_GRID, mask, PER_CHECK, checks=checks)
    red_only = LocatedRouter().given_checks([["Is there a red square?"]])(None, video[:1], PIXEL_GRID)
    blue_only = LocatedRouter().given_checks([["Is there a blue circle?"]])(None, video[:1], PIXEL_GRID)
    assert torch.allclose(weights.merged[0], (red_only[0] + blue_only[0]) / 2)
    assert torch.allclose(weights.merged[1], red_only[0])
    assert weights.mask.tolist() == [[True, True], [True, False]]


def test_without_the_steps_checks_it_says_how_to_route_it():
    with pytest.raises(ValueError, match="checks="):
        LocatedRouter()(None, render_batch([scene()]), PIXEL_GRID)


def test_a_slot_check_is_credited_to_its_slot_whatever_is_drawn_there():
    from tvrl_bench.world.slots import render_slots, sample_slot_scene

    scene = sample_slot_scene(0, colours=("red", "green", "blue", "yellow"))
    video = render_slots([scene])
    checks = [["Is the top right object magenta?", "Is the bottom left object blue?"]]  # the first one fails
    maps = LocatedRouter().given_checks(checks).per_check(None, video, PIXEL_GRID)  # [1, 2, F, H, W]
    for k, (x0, y0, x1, y1) in enumerate(((8, 0, 16, 8), (0, 8, 8, 16))):
        inside = torch.zeros(16, 16, dtype=torch.bool)
        inside[y0:y1, x0:x1] = True
        assert torch.all(maps[0, k][..., ~inside] == 0)
        assert torch.allclose(maps[0, k][..., inside], torch.tensor(4.0))  # mean 1 over the frame: a quarter of it
