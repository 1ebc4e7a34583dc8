"""The critic card's inversion columns on rendered slot scenes whose colours are known."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from tvrl_bench.cli.critic_card_inversions import check_key, inversions, lure_shown
from tvrl_bench.cli.critic_card_measure import RolloutSet
from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.rewards.toy_verdicts import ToyVerdicts
from tvrl_bench.world.slots import SLOTS, render_slots, sample_slot_scene, slot_checks, slot_prompt

ASKED = ("red", "green", "blue", "yellow")
# one prompt, a group of 4: right; top left a lure of red (yellow); top left cyan (no lure); top right a lure of
# green (cyan) and bottom left blue
DRAWN = [ASKED, ("yellow", "green", "blue", "yellow"), ("cyan", "green", "blue", "yellow"),
         ("red", "cyan", "blue", "yellow")]


def rollout_set(drawn=DRAWN, asked=ASKED) -> RolloutSet:
    """The drawn scenes as one prompt's group, with the exact evaluator's verdicts."""
    scenes = [sample_slot_scene(0, SLOTS, colours) for colours in drawn]  # the same squares, other colours
    videos = render_slots(scenes)
    prompt, checks = slot_prompt(asked, SLOTS.slots), list(slot_checks(asked, SLOTS.slots))
    evaluator = ToyEvaluator()
    from tvrl_bench.world.checks import parse_check

    passed = torch.tensor([evaluator.verdicts(v.numpy(), [parse_check(c) for c in checks]) for v in videos])
    n = len(drawn)
    return RolloutSet("base", 0, n, videos, [prompt] * n, [checks] * n, passed, torch.ones(n, len(checks), dtype=bool))


def test_lures_are_marked_where_a_slot_shows_one_of_the_asked_primary():
    shown = lure_shown(rollout_set())
    expected = torch.zeros(4, 4, dtype=torch.bool)
    expected[1, 0] = True  # asked red, drawn yellow
    expected[3, 1] = True  # asked green, drawn cyan
    assert torch.equal(shown, expected)


def test_the_exact_verdicts_invert_nothing():
    rows = inversions(ToyVerdicts(), rollout_set())
    assert rows["inversion"] == 0.0 and rows["inversion_checks"] == 0.0 and rows["inversion_vivid"] == 0.0
    assert rows["inversion_red"] == 0.0 and rows["inversion_green"] == 0.0
    assert math.isnan(rows["inversion_blue"])  # every rollout draws blue: no pair is ordered


def test_the_per_key_column_is_the_asked_colour_of_a_slot_check():
    assert check_key("Is the top left object red?") == "red"
    assert check_key("Is there a red circle?") == "object"


def test_a_critic_that_scores_against_the_evaluator_inverts_every_pair():
    flipped = rollout_set()
    flipped = replace(flipped, passed=~flipped.passed)  # the verdict critic now disagrees on every check
    rows = inversions(ToyVerdicts(), flipped)
    assert rows["inversion_checks"] == 1.0 and rows["inversion"] == 1.0
    assert math.isnan(rows["inversion_vivid"])  # lures are judged on the video: none is now a failing rollout's


def test_the_shipped_vivid_critic_prefers_the_lures_and_the_accurate_one_does_not():
    from tvrl_bench.rewards.toy_qwen_slots import ToyQwenSlots, ToyQwenSlotsVivid

    vivid, accurate = inversions(ToyQwenSlotsVivid(), rollout_set()), inversions(ToyQwenSlots(), rollout_set())
    assert vivid["inversion_vivid"] == 1.0 and accurate["inversion_vivid"] == 0.0
    assert accurate["inversion_checks"] == 0.0


@pytest.mark.parametrize("checks", [["Is there a red circle?"] * 4])
def test_no_vivid_column_off_the_slot_world(checks):
    s = rollout_set()
    assert lure_shown(replace(s, checks=[checks] * 4)) is None
