"""Shared test setup: one torch thread per process, a clean gin config around every test, shared toy data."""

from __future__ import annotations

import gin
import pytest
import torch

torch.set_num_threads(1)


def toy_vocabulary() -> list[str]:
    """Every word of a generous sample of toy prompts, and every word of each pretraining world's grammar (the
    default profile's slot world included), so one tiny policy reads the prompts of any toy profile."""
    from tvrl_bench.datasets.toy import toy_prompt_set
    from tvrl_bench.recipes.worlds import WORLDS

    prompts = toy_prompt_set(seed=0, n_train=200, n_eval=20)
    words = {w for item in prompts.train + prompts.eval for w in item.prompt.split()}
    return sorted(words.union(*(world().vocabulary() for world in WORLDS.values())))


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


@pytest.fixture(scope="session")
def toy_pairs():
    """The toy world's first three eval prompts, their checks, their ground-truth videos[3, F, 3, H, W] and the
    same videos rolled by one prompt (each paired with another prompt's truth)."""
    import random

    from tvrl_bench.datasets.toy import toy_prompt_set
    from tvrl_bench.world import ground_truth_videos

    items = toy_prompt_set(n_train=0, n_eval=3).eval
    prompts = [i.prompt for i in items]
    checks = [i.checks for i in items]
    truth = ground_truth_videos(prompts, random.Random(0))
    return prompts, checks, truth, truth.roll(1, dims=0)


@pytest.fixture(scope="session")
def pausable_sweep(tmp_path_factory, tiny_policy_path):
    """A two-trial study (uniform and window3 credit, 5 steps, a checkpoint every step) whose reward pauses in a
    trial's third step when $TVRL_FAULT = pause, and its uninterrupted sweep with two workers, run once for the
    tests that stop a sweep and check that the resumed one ends exactly like it.

    Returns (study file, the reference's tracking URI, the reference's --out folder, the reference's result).
    """
    from tests.reliability.helpers import run
    from tests.sweeps.helpers import write_study

    folder = tmp_path_factory.mktemp("pausable_sweep")
    faulty = folder / "faulty_oracle.gin"  # scores like the toy oracle; $TVRL_FAULT can pause it mid-step
    faulty.write_text("import tests.training.faults\nREWARD = @rewards.faulty_oracle()\n")
    study = write_study(folder, tiny_policy_path, steps=5, extra=("training.trial.checkpoint_every = 1",),
                        axes=f"{{'credit': ['uniform', 'window3'], 'reward': ['{faulty}']}}")
    uri, out = f"sqlite:///{folder / 'ref.db'}", folder / "ref"
    result = run(folder, "tvrl-sweep", str(study), "--tracking-uri", uri, "--out", str(out), "--no-progress",
                 "--workers", "2")
    return study, uri, out, result
