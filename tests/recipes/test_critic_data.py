"""The toy critic's training data: true, balanced questions on unseen scenes following the curriculum, and
reproducible augmentations that keep pixel values in range."""

from __future__ import annotations

import random

import torch

from tvrl_bench.datasets.toy import signatures, toy_prompt_set
from tvrl_bench.recipes.critic_data import CriticRecipe, degrade, step_batch
from tvrl_bench.world.checks import answer, parse_check
from tvrl_bench.world.difficulty import DEFAULT


def test_training_questions_are_true_balanced_unseen_and_follow_the_curriculum():
    recipe, steps = CriticRecipe(), 100
    eval_signatures = signatures(toy_prompt_set().eval)  # the default datasets.toy eval split, built independently
    data_rng, augment_rng = random.Random(0), torch.Generator().manual_seed(0)
    seen_kinds: dict[int, set[str]] = {}
    labels = []
    for step in (0, 10, 20, 60, 70, 80, 90):
        batch = step_batch(step, steps, recipe, DEFAULT, eval_signatures, data_rng, augment_rng)
        assert not {s.description().signature for s in batch.scenes} & eval_signatures
        assert batch.videos.shape == (recipe.videos_per_step, 8, 3, 16, 16)
        assert 0 <= float(batch.videos.min()) and float(batch.videos.max()) <= 1
        for i, q, label in zip(batch.index, batch.questions, batch.labels):
            assert answer(batch.scenes[i], q) == bool(label), (q, batch.scenes[i])
        seen_kinds[step] = {parse_check(q).kind for q in batch.questions}
        labels += batch.labels
    assert seen_kinds[0] == {"colour"}
    assert "background" not in seen_kinds[10] | seen_kinds[20]
    assert "background" in seen_kinds[60] | seen_kinds[70] | seen_kinds[80] | seen_kinds[90]
    assert 0.35 < sum(labels) / len(labels) < 0.65


def test_degrade_keeps_range_and_is_reproducible():
    video = torch.rand(6, 4, 3, 8, 8)
    assert torch.equal(degrade(video, 0.0, torch.Generator().manual_seed(1)), video)
    a = degrade(video, 1.0, torch.Generator().manual_seed(1))
    b = degrade(video, 1.0, torch.Generator().manual_seed(1))
    assert torch.equal(a, b) and not torch.allclose(a, video)
    assert a.shape == video.shape and float(a.min()) >= 0 and float(a.max()) <= 1
