"""The slot world: scenes inside their slots, prompts and checks that read back, the renderer's pixels, caption
noise independent per slot."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import torch

from tvrl_bench.world.checks import CheckSpec, answer, parse_check
from tvrl_bench.world.palette import rgb
from tvrl_bench.world.slots import (SLOT_NAMES, SLOTS, SlotWorld, distinct_colourings, misdescribe_slots,
                                    parse_slot_prompt, render_slots, sample_slot_scene, slot_box, slot_checks,
                                    slot_prompt, slot_world)


def test_slot_boxes_tile_the_frame_for_every_grid():
    for names in SLOT_NAMES.values():
        cover = torch.zeros(16, 16, dtype=torch.int64)
        for name in names:
            x0, y0, x1, y1 = slot_box(name, 16, 16)
            cover[y0:y1, x0:x1] += 1
        assert bool((cover == 1).all()), names
    assert slot_box("top right", 16, 16) == (8, 0, 16, 8)
    assert slot_box("bottom", 16, 24) == (0, 8, 24, 16)


def test_every_square_lies_inside_its_slot_one_pixel_from_its_edges():
    for seed in range(200):
        scene = sample_slot_scene(seed)
        for name, size, (x, y) in zip(scene.slots, scene.sizes, scene.corners):
            x0, y0, x1, y1 = slot_box(name, scene.height, scene.width)
            assert SLOTS.min_size <= size <= SLOTS.max_size
            assert x0 + 1 <= x and x + size <= x1 - 1 and y0 + 1 <= y and y + size <= y1 - 1


def test_rendered_pixels_are_the_squares_in_their_colours_on_the_background():
    scene = sample_slot_scene(7, colours=("red", "green", "blue", "yellow"))
    video = render_slots([scene])[0]  # [F, 3, H, W]
    assert video.shape == (8, 3, 16, 16)
    assert torch.equal(video[0], video[-1])  # the squares stand still
    for colour, size, (x, y) in zip(scene.colours, scene.sizes, scene.corners):
        assert torch.equal(video[0, :, y:y + size, x:x + size], torch.tensor(rgb(colour))[:, None, None].expand(3, size, size))
    coloured = sum(s * s for s in scene.sizes)
    background = (video[0] == 0).all(0).sum()
    assert int(background) == 16 * 16 - coloured


def test_prompt_and_checks_read_back():
    colours = ("red", "blue", "red", "cyan")
    prompt = slot_prompt(colours, SLOTS.slots)
    assert prompt == "red at the top left, blue at the top right, red at the bottom left and cyan at the bottom right"
    assert parse_slot_prompt(prompt) == (colours, SLOTS.slots)
    checks = slot_checks(colours, SLOTS.slots)
    assert checks[1] == "Is the top right object blue?"
    assert parse_check(checks[1]) == CheckSpec("slot", colour="blue", slot="top right")
    assert parse_slot_prompt("green at the left and red at the right") == (("green", "red"), ("left", "right"))
    assert parse_slot_prompt("magenta at the middle") == (("magenta",), ("middle",))


@pytest.mark.parametrize("bad", ["red at the top left and blue at the top right",  # half a grid
                                  "red at the top middle, blue at the top right, red at the bottom left and cyan at the bottom right",
                                  "blue at the top right, red at the top left, red at the bottom left and cyan at the bottom right"])
def test_a_prompt_that_is_not_one_grid_in_order_is_refused(bad):
    with pytest.raises(ValueError, match="slot prompt"):
        parse_slot_prompt(bad)


def test_answer_reads_a_slot_scene():
    scene = sample_slot_scene(0, colours=("red", "blue", "red", "cyan"))
    assert answer(scene, "Is the top right object blue?")
    assert not answer(scene, "Is the top right object red?")
    assert not answer(scene, "Is there a red object?")  # sprite-world checks say no about a slot scene


def test_distinct_colourings_are_distinct_reproducible_and_respect_the_exclusion():
    first = distinct_colourings(100, 3)
    assert len(set(first)) == 100 and first == distinct_colourings(100, 3)
    assert not set(distinct_colourings(50, 4, exclude=set(first))) & set(first)
    with pytest.raises(ValueError, match="fewer than"):
        distinct_colourings(SLOTS.scene_count() + 1, 0)


def test_caption_noise_swaps_each_slot_independently_at_its_rate():
    rng = random.Random(0)
    colours = ("red", "green", "blue", "yellow")
    swapped = [tuple(a != b for a, b in zip(misdescribe_slots(colours, 0.4, rng), colours)) for _ in range(20_000)]
    per_slot = [sum(s[k] for s in swapped) / len(swapped) for k in range(4)]
    assert all(abs(p - 0.4) < 0.015 for p in per_slot)
    both = sum(s[0] and s[1] for s in swapped) / len(swapped)
    assert abs(both - 0.16) < 0.012  # independent: P(both) = P(one) P(other)
    replacements = Counter(misdescribe_slots(("red",), 1.0, rng)[0] for _ in range(6000))
    assert "red" not in replacements and len(replacements) == len(SLOTS.colours) - 1


def test_a_world_that_cannot_hold_its_squares_is_refused():
    with pytest.raises(ValueError, match="max_size"):
        SlotWorld(max_size=7)
    with pytest.raises(ValueError, match="rows x cols"):
        SlotWorld(rows=3, cols=3)
    assert slot_world(rows=1, cols=2).slots == ("left", "right")
    with pytest.raises(ValueError, match="unknown SlotWorld field"):
        slot_world(slots=3)
