"""Pretraining of the learned toy critic: its data, curriculum, augmentation, schedule, and a tiny real run."""

from __future__ import annotations

import inspect
import json
import math
import random
from pathlib import Path

import torch
from safetensors.torch import load_file

from tvrl_bench.rewards.toy_learned import ToyLearned
from tvrl_bench.world.checks import answer, parse_check
from tvrl_bench.world.datasets import signatures, toy_prompt_set
from tvrl_bench.world.difficulty import DEFAULT
from tvrl_bench.world.pretrain_critic import (
    CriticRecipe,
    degrade,
    learning_rate,
    pretrain_critic,
    step_batch,
    train_critic,
)

TINY = CriticRecipe(videos_per_step=4, questions_per_video=3, validation_videos=8, eval_every=2)


def test_pretrain_critic_has_the_signature_prepare_toy_calls():
    params = inspect.signature(pretrain_critic).parameters
    assert list(params) == ["out_dir", "seed", "steps", "progress"]
    assert (params["seed"].default, params["steps"].default, params["progress"].default) == (0, None, True)


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


def test_learning_rate_warms_up_then_decays_by_cosine():
    recipe, steps = CriticRecipe(lr=1e-3, warmup_steps=100, final_lr_fraction=0.1), 1100
    assert math.isclose(learning_rate(0, steps, recipe), 1e-3 / 100)
    assert math.isclose(learning_rate(99, steps, recipe), 1e-3)
    assert math.isclose(learning_rate(600, steps, recipe), 1e-3 * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 0.5))))
    assert math.isclose(learning_rate(1100, steps, recipe), 1e-4)


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "model.safetensors"))


def test_a_tiny_run_writes_a_loadable_checkpoint_reproducible_from_its_seed(tmp_path):
    first = train_critic(tmp_path / "a", seed=3, steps=3, progress=False, recipe=TINY)
    train_critic(tmp_path / "b", seed=3, steps=3, progress=False, recipe=TINY)
    train_critic(tmp_path / "c", seed=4, steps=3, progress=False, recipe=TINY)
    a, b, c = (_weights(tmp_path / name) for name in "abc")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert any(not torch.equal(a[k], c[k]) for k in a)

    record = json.loads((tmp_path / "a" / "pretrain.json").read_text())
    assert record["seed"] == 3 and record["steps"] == 3 and record["time_s"] > 0
    assert set(record["validation_accuracy"]) == {"object", "colour", "shape", "motion", "background", "mean"}
    assert record == json.loads(json.dumps(first))

    critic = ToyLearned(path=str(tmp_path / "a"))
    video = torch.rand(2, 8, 3, 16, 16)
    scores = critic.score_pairs(video, ["", ""], ["Is there a red circle?", "Is the background black?"])
    assert scores.shape == (2,) and torch.isfinite(scores).all() and (scores <= 0).all()
