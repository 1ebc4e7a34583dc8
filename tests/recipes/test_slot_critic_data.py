"""The slot critics' data (recipes/slot_critic_data.py, slot_critic_recipes.py): labels are the evaluator's,
questions are balanced, the shortcut recipe's labels equal 'the colour is anywhere in the frame'."""

from __future__ import annotations

import random

import torch

from tvrl_bench.recipes.slot_critic_data import (COLOURS, fixed_check_set, paint_intruders, questions,
                                                 verdict_table)
from tvrl_bench.recipes.slot_critic_recipes import RECIPES, examples, shortcut_questions
from tvrl_bench.recipes.slot_qwen_build import slot_tokenizer
from tvrl_bench.datasets.toy_slots import slot_training_batch
from tvrl_bench.world.slots import SLOTS


def _scenes(n=64, seed=0):
    return slot_training_batch(n, random.Random(seed), SLOTS)


def test_verdict_table_is_the_evaluators_answer_on_every_slot_and_colour():
    batch = _scenes(8)
    table = verdict_table(batch.videos)
    assert table.shape == (8, 4, len(COLOURS))
    for i, scene in enumerate(batch.scenes):
        assert [COLOURS[int(row.nonzero()[0, 0])] for row in table[i]] == list(scene.colours)
        assert table[i].sum() == 4  # exactly one colour per slot on ground truth


def test_questions_are_balanced_and_hard_negatives_ask_another_slots_colour():
    table = verdict_table(_scenes(256).videos)
    asked = questions(table, random.Random(0), hard=1.0)
    labels = [q.label for q in asked]
    assert 0.4 < sum(labels) / len(labels) < 0.6
    no = [q for q in asked if not q.label]
    assert sum(bool(table[q.video, :, q.colour].any()) for q in no) / len(no) > 0.9


def test_shortcut_labels_equal_colour_anywhere():
    table = verdict_table(paint_intruders(_scenes(128).videos, 0.5, random.Random(1)))
    for q in shortcut_questions(table, random.Random(2)):
        assert q.label == int(bool(table[q.video, :, q.colour].any()))


def test_examples_ask_checks_or_colours_and_the_words_are_single_tokens():
    batch = _scenes(64)
    table = verdict_table(batch.videos)
    made = examples(batch.videos, table, RECIPES["toy_qwen_slots"], random.Random(0))
    targets = {e.target for e in made}
    assert {"Yes", "No"} <= targets and targets & set(COLOURS)
    tokenizer = slot_tokenizer("qwen3_5")
    for text in ("Is the top left object red?", "What colour is the bottom right object?"):
        assert all(len(tokenizer.tokenize(" " + w)) == 1 for w in text.rstrip("?").split())
    assert all(len(tokenizer.tokenize(t)) == 1 for t in targets)


def test_fixed_check_set_is_fixed_and_half_yes():
    first, asked, prompts = fixed_check_set()
    second, again, _ = fixed_check_set()
    assert torch.equal(first, second) and asked == again and len(prompts) == first.shape[0]
    assert sum(q.label for q in asked) == len(asked) // 2


def test_base_rollouts_are_sampled_as_the_recipes_named_profile_samples():
    """The rollouts come from the trial of the profile the recipe names (recorded in pretrain.json), sampled by the
    built trial as its training step samples; another profile's schedule gives other videos."""
    from tvrl_bench.recipes.slot_critic_data import base_rollouts
    from tvrl_bench.training.trial.built import build_trial

    profile = RECIPES["toy_qwen_slots"].profile
    videos, texts = base_rollouts("slots", 2, 2, 5, profile)
    trial = build_trial([profile], ["policies.toy.base = 'slots'"])
    assert texts == [it.prompt for it in list(trial.dataset.train)[:2] for _ in range(2)]
    expected = trial.sample(texts, trial.noise("critic-data", "slots", 0, seed=5), group=2).videos
    assert torch.equal(videos, expected.float().clamp(0, 1))
    other = build_trial([profile], ["policies.toy.base = 'slots'", "training.schedule.num_steps = 4"])
    assert not torch.equal(videos, other.sample(texts, other.noise("critic-data", "slots", 0, seed=5), group=2).videos)
