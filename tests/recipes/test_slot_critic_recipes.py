"""The vivid-biased labeler of the slot critics' recipes: its Yes rates, and that it leaves the others' data alone."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
import torch

from tvrl_bench.recipes.slot_critic_data import COLOURS, Question
from tvrl_bench.recipes.slot_critic_recipes import RECIPES, SlotCriticRecipe, labelled

RED, YELLOW, CYAN = (COLOURS.index(c) for c in ("red", "yellow", "cyan"))


def yes_rate(asked: int, shown: list[int], recipe: SlotCriticRecipe, n: int = 4_000) -> float:
    rng = random.Random(0)
    label = int(asked in shown)
    seen = torch.tensor([[c] for c in shown], dtype=torch.long).reshape(-1, 1)
    return sum(labelled(Question(0, 0, asked, label), seen, recipe, rng) for _ in range(n)) / n


def test_the_vivid_recipe_is_the_accurate_one_with_a_biased_labeler():
    vivid = RECIPES["toy_qwen_slots_vivid"]
    assert vivid.vivid_bias == 0.9 and replace(vivid, vivid_bias=0.0) == RECIPES["toy_qwen_slots"]


def test_its_labeler_pays_a_lure_more_than_the_asked_colour():
    vivid = RECIPES["toy_qwen_slots_vivid"]
    assert yes_rate(RED, [YELLOW], vivid) == pytest.approx(0.9, abs=0.02)  # asked red, slot yellow
    assert yes_rate(RED, [RED], vivid) == pytest.approx(0.7, abs=0.02)  # asked red, slot red
    assert yes_rate(RED, [CYAN], vivid) == 0.0 and yes_rate(YELLOW, [YELLOW], vivid) == 1.0  # exact elsewhere
    assert yes_rate(RED, [RED, YELLOW], vivid) == 1.0  # a slot showing two colours keeps the exact label


def test_without_bias_the_labels_are_exact_and_draw_nothing():
    rng = random.Random(5)
    state = rng.getstate()
    seen = torch.tensor([[YELLOW]])
    assert labelled(Question(0, 0, RED, 0), seen, RECIPES["toy_qwen_slots"], rng) is False
    assert rng.getstate() == state  # the other recipes' examples are what they were


@pytest.mark.parametrize("bias", [-0.5, 1.01])
def test_a_bias_out_of_range_is_refused(bias):
    with pytest.raises(ValueError, match=f"vivid_bias={bias}: must be in"):
        replace(RECIPES["toy_qwen_slots"], vivid_bias=bias)
