"""The exact evaluator on the slot world's checks: a slot passes when its asked colour covers most of the slot."""

from __future__ import annotations

import torch

from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.world.palette import rgb
from tvrl_bench.world.slots import render_slots, sample_slot_scene, slot_checks, slot_prompt

COLOURS = ("red", "green", "blue", "yellow")


def scored(video: torch.Tensor, colours=COLOURS) -> list[bool]:
    scene = sample_slot_scene(0, colours=colours)
    metrics, records = ToyEvaluator().evaluate_detailed(video[None], [slot_prompt(colours, scene.slots)],
                                                        [slot_checks(colours, scene.slots)])
    return [c["passed"] for c in records[0]["checks"]]


def test_ground_truth_passes_and_each_slot_is_judged_on_its_own_pixels():
    scene = sample_slot_scene(3, colours=COLOURS)
    video = render_slots([scene])[0]
    assert scored(video) == [True, True, True, True]
    assert scored(video, ("red", "green", "blue", "cyan")) == [True, True, True, False]
    x, y = scene.corners[1]
    wrong = video.clone()
    wrong[:, :, y:y + scene.sizes[1], x:x + scene.sizes[1]] = torch.tensor(rgb("magenta"))[:, None, None]
    assert scored(wrong) == [True, False, True, True]  # the top right square drawn in another colour


def test_the_majority_colour_of_the_slot_decides_and_tiny_specks_do_not_count():
    video = torch.zeros(8, 3, 16, 16)
    video[:, :, 1:5, 1:5] = torch.tensor(rgb("red"))[:, None, None]  # 16 red px in the top left
    video[:, :, 5:7, 1:3] = torch.tensor(rgb("green"))[:, None, None]  # 4 green px beside them
    video[:, :, 1:3, 9:11] = torch.tensor(rgb("green"))[:, None, None]  # only 4 px in the top right: below min_area
    assert scored(video) == [True, False, False, False]
    video[:, :, 9:13, 1:5] = torch.tensor(rgb("yellow"))[:, None, None]  # bottom left: yellow 16 px
    video[:, :, 13:15, 1:7] = torch.tensor(rgb("blue"))[:, None, None]  # against 12 blue px
    assert scored(video, ("red", "green", "yellow", "yellow")) == [True, False, True, False]


def test_it_needs_the_colour_in_at_least_half_the_frames():
    video = render_slots([sample_slot_scene(1, colours=COLOURS)])[0]
    video[:5] = 0  # five of eight frames black
    assert scored(video) == [False] * 4
    video = render_slots([sample_slot_scene(1, colours=COLOURS)])[0]
    video[:4] = 0
    assert scored(video) == [True] * 4
