"""The pretraining worlds: every prompt's words in the vocabulary, held-out scenes kept out, caption noise per world."""

from __future__ import annotations

import random

import pytest

from tvrl_bench.datasets.toy_slots import slot_prompt_set
from tvrl_bench.recipes.caption_noise import CaptionNoise
from tvrl_bench.recipes.worlds import WORLDS, pretrain_world
from tvrl_bench.world.slots import SLOT_NAMES, parse_slot_prompt, slot_prompt


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_every_prompt_of_the_world_is_in_its_vocabulary_and_the_split_keeps_out_its_scenes(name):
    world = pretrain_world(name)
    vocabulary = set(world.vocabulary())
    validation, eval_items, excluded = world.split(seed=0, n_val=16, n_eval=8)
    assert len(validation) == 16 and len(eval_items) == 8
    data = world.batch(64, random.Random(0), excluded)
    assert data.videos.shape == (64, world.frames, 3, world.height, world.width)
    for prompt in (*data.prompts, *(i.prompt for i in validation + eval_items)):
        assert set(prompt.lower().replace(",", " ").split()) <= vocabulary, prompt
    assert not world.signatures([*validation, *eval_items]) - excluded
    assert not world.signatures([type(validation[0])(p, ()) for p in data.prompts]) & excluded


def test_the_slot_vocabulary_covers_every_grid_and_colour():
    vocabulary = set(pretrain_world("slots").vocabulary())
    for slots in SLOT_NAMES.values():
        assert set(slot_prompt(("purple",) * len(slots), slots).replace(",", " ").split()) <= vocabulary


def test_slot_captions_swap_colours_per_slot_and_clean_captions_are_the_batch_own():
    world = pretrain_world("slots")
    data = world.batch(400, random.Random(1), frozenset())
    assert world.captions(data, CaptionNoise(p=0.0), random.Random(0)) is data.prompts
    noisy = world.captions(data, CaptionNoise(p=0.5), random.Random(0))
    swapped = [a != b for scene, caption in zip(data.scenes, noisy)
               for a, b in zip(scene.colours, parse_slot_prompt(caption)[0])]
    assert abs(sum(swapped) / len(swapped) - 0.5) < 0.04
    with pytest.raises(ValueError, match="swaps colours"):
        world.captions(data, CaptionNoise(p=0.5, kind="shape"), random.Random(0))


def test_the_slot_split_scores_trials_on_the_slot_datasets_eval_set():
    _, eval_items, _ = pretrain_world("slots").split(seed=3, n_val=4, n_eval=8)
    assert eval_items == slot_prompt_set().eval[:8]


def test_an_unknown_world_names_the_worlds():
    with pytest.raises(ValueError, match="sprites, slots"):
        pretrain_world("blobs")
