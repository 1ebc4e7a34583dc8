"""datasets.toy_slots: splits that share no scene, reproducible from the seed, the wide held-out set, batches."""

from __future__ import annotations

import random

import pytest

from tvrl_bench.datasets.toy_slots import slot_prompt_set, slot_signatures, slot_training_batch
from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.world.slots import SLOTS


def test_train_and_eval_share_no_scene_and_eval_does_not_move_with_n_train():
    prompts = slot_prompt_set(seed=0, n_train=300, n_eval=40)
    assert not slot_signatures(prompts.train) & slot_signatures(prompts.eval)
    assert len(slot_signatures(prompts.train)) == 300 and len(slot_signatures(prompts.eval)) == 40
    assert slot_prompt_set(seed=0, n_train=10, n_eval=40).eval == prompts.eval
    assert slot_prompt_set(seed=1, n_train=10, n_eval=40).eval != prompts.eval
    assert prompts.name == "toy-slots"  # a toy dataset: trials may run the wide evaluation on it
    assert all(len(item.checks) == 4 for item in prompts.eval)


def test_the_wide_set_starts_with_the_eval_split_and_drops_the_trained_scenes():
    prompts = slot_prompt_set(seed=0, n_train=512, n_eval=64)
    kept, dropped = prompts.held_out(1000)
    assert kept[:10] == prompts.eval[:10]
    assert not slot_signatures(kept) & slot_signatures(prompts.train)
    assert len(kept) + dropped == 1000 and 550 < len(kept) < 700
    with pytest.raises(ValueError, match="fewer than"):
        prompts.held_out(SLOTS.scene_count() + 1)


def test_training_batches_keep_out_the_excluded_scenes_and_their_videos_pass_their_checks():
    prompts = slot_prompt_set(seed=0, n_train=0, n_eval=64)
    batch = slot_training_batch(64, random.Random(0), SLOTS, exclude=slot_signatures(prompts.eval))
    assert not {s.colours for s in batch.scenes} & slot_signatures(prompts.eval)
    metrics = ToyEvaluator().evaluate(batch.videos, list(batch.prompts), list(batch.checks))
    assert metrics == {"overall": 1.0, "slot": 1.0}
