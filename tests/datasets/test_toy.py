from __future__ import annotations

import gin
import pytest
import torch

from tvrl_bench import registry
from tvrl_bench.config import PROJECT_ROOT
from tvrl_bench.prompts import PromptSet
from tvrl_bench.world.checks import answer, checks_for
from tvrl_bench.datasets.toy import signatures, toy_prompt_set, training_batch
from tvrl_bench.world.difficulty import DEFAULT
from tvrl_bench.world.grammar import parse_prompt
from tvrl_bench.world.render import render_batch


def test_prompt_sets_are_reproducible_and_disjoint():
    a = toy_prompt_set(seed=3, n_train=200, n_eval=40)
    assert a == toy_prompt_set(seed=3, n_train=200, n_eval=40)
    assert a != toy_prompt_set(seed=4, n_train=200, n_eval=40)
    assert isinstance(a, PromptSet) and a.name == "toy-default"
    assert (len(a.train), len(a.eval)) == (200, 40)
    train, evals = signatures(a.train), signatures(a.eval)
    assert len(train) == 200 and len(evals) == 40 and not train & evals
    assert len({i.prompt for i in a.train} | {i.prompt for i in a.eval}) == 240


def test_eval_split_does_not_depend_on_the_train_size():
    assert toy_prompt_set(seed=1, n_train=10, n_eval=30).eval == toy_prompt_set(seed=1, n_train=300, n_eval=30).eval


def test_items_carry_their_checks():
    s = toy_prompt_set(seed=0, n_train=20, n_eval=20, count_checks=True)
    for item in s.train + s.eval:
        description = parse_prompt(item.prompt)
        assert item.checks == checks_for(description, count=True)
        assert all(answer(description, c) for c in item.checks)
    assert any(len(parse_prompt(i.prompt).sprites) == 2 for i in s.eval)


def test_knobs_and_errors():
    hard = toy_prompt_set(seed=0, n_train=5, n_eval=5, difficulty="hard")
    assert hard.name == "toy-hard"
    one = toy_prompt_set(seed=0, n_train=10, n_eval=10, max_sprites=1, n_colours=2, n_backgrounds=1)
    assert all(len(parse_prompt(i.prompt).sprites) == 1 for i in one.train)
    with pytest.raises(ValueError, match="distinct toy scenes"):
        toy_prompt_set(seed=0, n_train=100, n_eval=10, max_sprites=1, n_colours=2, n_backgrounds=1)


def test_registered_and_built_from_the_preset():
    gin.parse_config_file(str(PROJECT_ROOT / "components/datasets/toy.gin"))
    gin.parse_config(["datasets.toy.n_train = 8", "datasets.toy.n_eval = 4"])
    built = registry.build("DATASET")
    assert built == toy_prompt_set(seed=0, n_train=8, n_eval=4)


def test_training_batch_renders_the_prompts_and_can_exclude_eval_scenes():
    evals = toy_prompt_set(seed=0, n_train=0, n_eval=64).eval
    batch = training_batch(50, 2, DEFAULT, exclude=signatures(evals))
    assert batch.videos.shape == (50, 8, 3, 16, 16)
    assert torch.equal(batch.videos, render_batch(list(batch.scenes)))
    assert [parse_prompt(p) for p in batch.prompts] == [s.description() for s in batch.scenes]
    assert not signatures(batch.prompts) & signatures(evals)
    assert batch.checks[0] == checks_for(batch.scenes[0])
