"""The slot critics' recipes run a few steps end to end (smoke) and write what their critics load."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch

from tvrl_bench.recipes.pretrain_critic import learning_rate
from tvrl_bench.recipes.pretrain_slot_critic import pretrain_slot_critic
from tvrl_bench.recipes.pretrain_slot_scorer import RECIPE, pretrain_slot_scorer
from tvrl_bench.recipes.slot_critic_recipes import RECIPES
from tests.rewards.tiny_slot_critics import SMALL
from tvrl_bench.rewards.toy_qwen_slots import ToyQwenSlotsWeak
from tvrl_bench.rewards.toy_scorer_slots import ToyScorerSlots

SHRUNK = dict(size=SMALL, rollout_prompts=2, group=2, validation_prompts=2, eval_every=2)


def test_answer_critic_recipe_smoke(tmp_path):
    recipe = replace(RECIPES["toy_qwen_slots_weak"], pairs_per_step=4, label_pool=8, **SHRUNK)
    summary = pretrain_slot_critic("toy_qwen_slots_weak", tmp_path, seed=0, steps=3, progress=False, recipe=recipe)
    record = json.loads((tmp_path / "pretrain.json").read_text())
    assert record == json.loads(json.dumps(summary))
    assert record["world"] == "slots" and record["steps"] == 3 and record["seed"] == 0
    assert record["data"]["pool"] == 8 and record["data"]["rollout_videos"] == 8
    assert record["recipe"]["label_pool"] == 8 and record["cpu_s"] > 0
    assert record["recipe"]["profile"] == recipe.profile == "components/profiles/toy.gin"  # named, not the day's
    assert [h["step"] for h in record["history"]] == [2, 3]
    assert set(record["measures"]) == {"validation_agreement", "fixed_set_accuracy", "rendered_yes_accuracy",
                                       "rendered_other_slot_no_accuracy", "map_locality"}
    critic = ToyQwenSlotsWeak(path=str(tmp_path))
    assert not any(p.requires_grad for p in critic.parameters())


def test_scorer_recipe_smoke(tmp_path):
    recipe = replace(RECIPE, videos_per_step=4, **SHRUNK)
    pretrain_slot_scorer(tmp_path, seed=0, steps=2, progress=False, recipe=recipe)
    record = json.loads((tmp_path / "pretrain.json").read_text())
    assert record["world"] == "slots" and record["critic"] == "toy_scorer_slots" and record["steps"] == 2
    assert set(record["measures"]) == {"validation_mae", "validation_correlation", "fixed_set_mae"}
    assert (tmp_path / "checkpoint-2" / "model.pth").is_file()
    scores = ToyScorerSlots(path=str(tmp_path)).score(torch.zeros(1, 8, 3, 16, 16), [
        "red at the top left, red at the top right, red at the bottom left and red at the bottom right"], [()])
    assert scores.shape == (1, 1)


def test_recipes_differ_where_their_critics_should():
    base, weak, shortcut = (RECIPES[n] for n in ("toy_qwen_slots", "toy_qwen_slots_weak", "toy_qwen_slots_shortcut"))
    assert weak.label_pool and not base.label_pool and replace(weak, label_pool=None) == base
    assert shortcut.shortcut and shortcut.hard == 0 and shortcut.colour_questions == 0
    assert learning_rate(0, 100, base) < learning_rate(10, 100, base) == pytest.approx(base.lr)
    assert learning_rate(99, 100, base) == pytest.approx(base.lr * base.final_lr_fraction, rel=0.05)
