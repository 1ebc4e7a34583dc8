"""The critic's false-yes rate: against a hand count, and logged by a trial's evaluations."""

from __future__ import annotations

import random

import torch

from tests.training.test_periodic_eval import trainer
from tvrl_bench.training.false_yes import false_yes_rate
from tvrl_bench.world.checks import parse_check


def records_of(passed: list[list[bool]]) -> list[dict]:
    return [{"checks": [{"check": f"c{k}", "passed": p} for k, p in enumerate(row)]} for row in passed]


def test_counts_critic_yes_and_evaluator_no_over_every_asked_check():
    rng = random.Random(3)
    lengths = [rng.randint(1, 4) for _ in range(12)]
    scores = torch.rand(12, 4, generator=torch.Generator().manual_seed(3))
    mask = torch.arange(4)[None, :] < torch.tensor(lengths)[:, None]
    passed = [[rng.random() < 0.5 for _ in range(n)] for n in lengths]
    false = sum(float(scores[i, k]) > 0.5 and not passed[i][k] for i in range(12) for k in range(lengths[i]))
    assert false_yes_rate(scores, mask, records_of(passed)) == false / sum(lengths)


def test_unreadable_without_per_check_answers():
    scores, mask = torch.ones(2, 1), torch.ones(2, 1, dtype=torch.bool)
    assert false_yes_rate(scores, mask, [{"score": 1.0}, {"score": 0.0}]) is None  # an evaluator without checks
    assert false_yes_rate(scores, mask, records_of([[True, False], [True]])) is None  # counts differ
    assert false_yes_rate(scores, mask, records_of([[True]])) is None  # fewer records than videos


def test_a_trials_evaluation_logs_the_rate_of_its_own_videos(tiny_policy_path, tmp_path):
    t = trainer(tiny_policy_path, tmp_path / "a", [], steps=1)
    metrics = t.evaluation.subset()
    items = t.evaluation.items[: t.evaluation.subset_size()]
    videos = t.evaluation.generate(len(items))
    prompts, checks = [it.prompt for it in items], [list(it.checks) for it in items]
    answers = t.s.reward.score(videos, prompts, checks)  # [B, K] P(yes), independent of the evaluation's scoring
    truth = [t.s.evaluator.verdicts(v.numpy(), [parse_check(c) for c in cs]) for v, cs in zip(videos, checks)]
    false = sum(float(answers[i, k]) > 0.5 and not truth[i][k] for i in range(len(items)) for k in range(len(checks[i])))
    assert metrics["critic_false_yes"] == false / sum(len(c) for c in checks)
    assert "critic_false_yes" in t.run(0).metrics
