"""Pretraining of the learned toy critic: its data, curriculum, augmentation, schedule, and a tiny real run."""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path

import torch
from safetensors.torch import load_file

from tvrl_bench.rewards.toy_learned import ToyLearned
from tvrl_bench.recipes.pretrain_critic import (
    CriticRecipe,
    learning_rate,
    pretrain_critic,
    train_critic,
)

TINY = CriticRecipe(videos_per_step=4, questions_per_video=3, validation_videos=8, eval_every=2)


def test_pretrain_critic_has_the_signature_prepare_toy_calls():
    params = inspect.signature(pretrain_critic).parameters
    assert list(params) == ["out_dir", "seed", "steps", "progress"]
    assert (params["seed"].default, params["steps"].default, params["progress"].default) == (0, None, True)


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
