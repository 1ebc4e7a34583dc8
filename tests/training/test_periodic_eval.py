"""Evaluation during training: at the right steps, with fixed noise, resumed without repeats."""

from __future__ import annotations

import gin
import pytest

from tests.training.conftest import FAST
from tvrl_bench.config import ConfigError, load_config
from tvrl_bench.datasets.toy import signatures
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.evaluation import TrialEvaluation
from tvrl_bench.training.loop import Hooks, Trainer
from tvrl_bench.training.settings import TrialSettings


def trainer(policy_path: str, folder, calls: list, steps: int = 5, eval_every: int = 2) -> Trainer:
    load_config(["components/profiles/toy_v1.gin"], [
        *FAST, f"policies.toy.path = '{policy_path}'", f"training.trial.steps = {steps}",
        f"training.trial.eval_every = {eval_every}", "training.trial.sample_videos = 0",
        *(["training.trial.eval_subset = 2"] if eval_every else []),  # a subset with no periodic evaluation is refused
    ])
    settings = TrialSettings()
    gin.clear_config()
    hooks = Hooks(on_eval=lambda step, metrics: calls.append((step, metrics)))
    return Trainer(settings, Processes(cpu=True), CheckpointDir(folder), None, hooks, progress=False)


def test_evaluates_before_training_and_every_eval_every_steps(tiny_policy_path, tmp_path):
    calls: list = []
    t = trainer(tiny_policy_path, tmp_path / "a", calls)
    fresh = t.evaluation.subset()
    final = t.run(0).metrics
    assert [step for step, _ in calls] == [0, 2, 4]  # step 5 is the final evaluation, returned by run
    assert calls[0][1] == fresh  # fixed eval noise: the same videos as an evaluation before training
    assert {"overall", "critic_reward"} <= set(calls[0][1]) and {"overall", "critic_reward"} <= set(final)
    assert calls[1][1] != calls[0][1]  # the policy changed between evaluations


def test_a_resumed_trial_evaluates_only_the_steps_still_ahead(tiny_policy_path, tmp_path):
    calls: list = []
    trainer(tiny_policy_path, tmp_path / "b", calls, steps=7).run(3)
    assert [step for step, _ in calls] == [4, 6]


def test_off_by_default(tiny_policy_path, tmp_path):
    calls: list = []
    trainer(tiny_policy_path, tmp_path / "c", calls, steps=2, eval_every=0).run(0)
    assert calls == []


def test_eval_every_must_not_be_negative(tiny_policy_path, tmp_path):
    with pytest.raises(Exception, match="eval_every"):
        trainer(tiny_policy_path, tmp_path / "d", [], eval_every=-1)


def wide_trainer(policy_path: str, folder, wide: int, eval_prompts: int = 4) -> tuple[Trainer, frozenset]:
    load_config(["components/profiles/toy_v1.gin"], [
        *FAST, f"policies.toy.path = '{policy_path}'", "training.trial.steps = 1", "training.trial.sample_videos = 0",
        f"training.trial.eval_prompts = {eval_prompts}", f"training.trial.wide_eval_prompts = {wide}",
    ])
    settings = TrialSettings()
    trained = signatures(settings.dataset.train)
    try:
        return Trainer(settings, Processes(cpu=True), CheckpointDir(folder), None, Hooks(), progress=False), trained
    finally:
        gin.clear_config()


def test_the_wide_evaluation_scores_held_out_prompts_that_start_with_the_trials_own(tiny_policy_path, tmp_path):
    t, trained = wide_trainer(tiny_policy_path, tmp_path / "w", wide=40)
    items = t.wide_evaluation.items
    assert t.wide_dropped + len(items) == 40 and t.wide_dropped > 0  # 16 trained scenes among the world's ~1,340
    assert signatures(items).isdisjoint(trained)
    own = [it.prompt for it in t.eval_items]
    assert [it.prompt for it in items[: len(own)]] == own  # the trial's eval prompts come first, in order
    result = t.run(0)
    assert result.wide is not None and result.wide.prompts == len(items)
    # The same noise stream: the wide set's first videos are the final evaluation's own, so scoring only them
    # reproduces the final evaluation's metrics exactly.
    head = TrialEvaluation(t.s, t.policy, items[: len(own)], t.micro_batch, t.processes.device).full().metrics
    assert head == result.metrics
    assert set(result.wide.metrics) == set(result.metrics)
    # Its per-video records (logged as wide_eval/results.json) are one per held-out prompt, in order.
    assert [r["prompt"] for r in result.wide.records] == [it.prompt for it in items]
    assert result.wide.records[: len(own)] == result.records


def test_no_wide_evaluation_by_default_and_fewer_prompts_than_the_trials_own_are_refused(tiny_policy_path, tmp_path):
    t, _ = wide_trainer(tiny_policy_path, tmp_path / "n", wide=0)
    assert t.run(0).wide is None
    with pytest.raises(ConfigError, match=r"wide_eval_prompts = 3: fewer than the final evaluation's eval_prompts = 4"):
        wide_trainer(tiny_policy_path, tmp_path / "f", wide=3)
