"""Pairwise judges on the real toy world (exact evaluator, toy_oracle critic), built directly and through gin."""

from __future__ import annotations


import gin
import pytest

from tvrl_bench import registry
from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.judges import CriticJudge, EvaluatorJudge, judge_label
from tvrl_bench.rewards.toy_oracle import ToyOracle


def test_evaluator_judge_prefers_the_video_that_matches(toy_pairs):
    prompts, checks, truth, wrong = toy_pairs
    judge = EvaluatorJudge(ToyEvaluator())
    for i in range(3):
        left, right = judge.scores(prompts[i], checks[i], truth[i], wrong[i])
        assert left == pytest.approx(1.0) and right < 0.9
        assert judge.judge(prompts[i], checks[i], truth[i], wrong[i]) == "left"
        assert judge.judge(prompts[i], checks[i], wrong[i], truth[i]) == "right"
        assert judge.judge(prompts[i], checks[i], truth[i], truth[i].clone()) == "tie"
    with pytest.raises(TypeError, match="needs an Evaluator"):
        EvaluatorJudge(object())


def test_vlm_judge_over_a_critic(toy_pairs):
    prompts, checks, truth, wrong = toy_pairs
    judge = CriticJudge(ToyOracle(), use_checks=True)
    for i in range(3):
        left, right = judge.scores(prompts[i], checks[i], truth[i], wrong[i])
        assert left > right
        assert judge.judge(prompts[i], checks[i], wrong[i], truth[i]) == "right"
    templated = CriticJudge(ToyOracle())
    assert templated.questions("a red circle", ()) == ("Does this video match the prompt: a red circle?",)
    with pytest.raises(ValueError, match="must contain '{prompt}'"):
        CriticJudge(ToyOracle(), question="Is it good?")


def test_judges_are_registered_and_built_by_gin():
    registry.import_components()
    assert {"judges.evaluator", "judges.vlm"} <= set(registry.registered_names())
    gin.parse_config("judges.evaluator.evaluator = @evaluators.toy()\njudges.evaluator.tolerance = 0.01")
    judge = registry.get("judges.evaluator").target()
    assert isinstance(judge.evaluator, ToyEvaluator) and judge.tolerance == 0.01
    assert judge_label(judge) == "judges.evaluator"
