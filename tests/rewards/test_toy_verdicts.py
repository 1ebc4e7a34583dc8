"""`rewards.toy_verdicts`: the exact toy evaluator's per-check verdicts as the reward, with no gradient."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.datasets.toy import toy_prompt_set
from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.rewards.toy_verdicts import ToyVerdicts
from tvrl_bench.training.scoring import score_videos
from tvrl_bench.world.checks import parse_check
from tvrl_bench.world.grammar import parse_prompt
from tvrl_bench.world.palette import rgb
from tvrl_bench.world.render import ground_truth_videos


@pytest.fixture(scope="module")
def toy_set():
    items = toy_prompt_set(seed=0, n_train=0, n_eval=24).eval
    prompts, checks = [i.prompt for i in items], [list(i.checks) for i in items]
    return prompts, checks, ground_truth_videos(prompts, 1)


def test_ground_truth_passes_every_check(toy_set):
    prompts, checks, videos = toy_set
    reward = ToyVerdicts()
    scores, mask = reward.score(videos, prompts, checks), reward.score_mask(checks)
    assert scores.shape == mask.shape and torch.all(scores[mask] == 1.0) and torch.all(scores[~mask] == 0.0)
    assert torch.equal(score_videos(reward, videos, prompts, checks, need_grads=False).rewards(), torch.ones(len(prompts)))


def test_a_background_only_video_passes_its_background_check_and_fails_the_rest(toy_set):
    prompts, checks, videos = toy_set
    colours = torch.tensor([rgb(parse_prompt(p).background) for p in prompts])
    background = colours[:, None, :, None, None].expand_as(videos).clone()
    scores = ToyVerdicts().score(background, prompts, checks)
    for i, questions in enumerate(checks):
        expected = [1.0 if parse_check(q).kind == "background" else 0.0 for q in questions]
        assert scores[i, : len(questions)].tolist() == expected, questions


def test_scores_are_the_evaluators_verdicts_on_wrong_videos(toy_set):
    prompts, checks, videos = toy_set
    shifted = torch.roll(videos, 1, dims=0)  # every prompt paired with another prompt's ground truth
    evaluator = ToyEvaluator(tolerance=0.25, min_area=5)
    scores = ToyVerdicts(evaluator).score(shifted, prompts, checks)
    _, records = evaluator.evaluate_detailed(shifted, prompts, checks)
    for i, record in enumerate(records):
        assert scores[i, : len(checks[i])].tolist() == [float(c["passed"]) for c in record["checks"]]
    assert 0 < float(scores.sum()) < sum(len(c) for c in checks)  # some pass, some fail
    pairs = ToyVerdicts(evaluator).score_pairs(shifted[:2], prompts[:2], [checks[0][0], checks[1][1]])
    assert pairs.tolist() == [scores[0, 0].item(), scores[1, 1].item()]


def test_asking_for_gradients_is_refused(toy_set):
    prompts, checks, videos = toy_set
    reward = ToyVerdicts()
    assert reward.grad_spaces == ()
    with pytest.raises(ValueError, match="not differentiable"):
        score_videos(reward, videos[:2], prompts[:2], checks[:2], need_grads=True)
    with pytest.raises(ValueError, match="not differentiable"):
        reward.score_with_maps(videos[:2], prompts[:2], checks[:2], "pixels")


def test_rejects_an_evaluator_that_is_not_the_toy_one():
    with pytest.raises(ValueError, match="toy evaluator"):
        ToyVerdicts(evaluator=object())
