"""Shared test setup: one torch thread per process, and a clean gin config around every test."""

from __future__ import annotations

import gin
import pytest
import torch

torch.set_num_threads(1)


def toy_vocabulary() -> list[str]:
    """Every word of a generous sample of toy prompts."""
    from tvrl_bench.world.datasets import toy_prompt_set

    prompts = toy_prompt_set(seed=0, n_train=200, n_eval=20)
    return sorted({w for item in prompts.train + prompts.eval for w in item.prompt.split()})


@pytest.fixture(scope="session")
def tiny_policy_path(tmp_path_factory) -> str:
    """A randomly initialised, narrow toy policy: the trainer's mechanics do not need a pretrained one."""
    from tvrl_bench.policies.toy import ToyPolicy

    folder = tmp_path_factory.mktemp("tiny_policy")
    ToyPolicy.create(folder, toy_vocabulary(), seed=0, width=32, layers=1)
    return str(folder)


@pytest.fixture(autouse=True)
def clean_gin():
    gin.clear_config()
    yield
    gin.clear_config()
