from __future__ import annotations

import json

import gin
import numpy as np
import pytest
import torch

from tvrl_bench import registry
from tvrl_bench.config import PROJECT_ROOT
from tvrl_bench.datasets.toy import toy_prompt_set
from tvrl_bench.world.difficulty import HARD, difficulty
from tvrl_bench.evaluators.toy import ToyEvaluator, classify_shape
from tvrl_bench.world.grammar import parse_prompt
from tvrl_bench.world.palette import rgb
from tvrl_bench.world.render import ground_truth_videos, render
from tvrl_bench.world.scene import Scene, Sprite
from tvrl_bench.world.shapes import shape_mask


@pytest.fixture(scope="module")
def eval_set():
    items = toy_prompt_set(seed=0, n_train=0, n_eval=96).eval
    prompts = [i.prompt for i in items]
    checks = [i.checks for i in items]
    return prompts, checks, ground_truth_videos(prompts, 1)


def _background_only(prompts, like):
    colours = torch.tensor([rgb(parse_prompt(p).background) for p in prompts])
    return colours[:, None, :, None, None].expand_as(like).clone()


def test_ground_truth_scores_one(eval_set):
    prompts, checks, videos = eval_set
    metrics, raw = ToyEvaluator().evaluate_detailed(videos, prompts, checks)
    assert metrics["overall"] >= 0.98
    assert set(metrics) == {"overall", "object", "attribute", "motion", "background"}
    assert all(r["score"] >= 0.98 for r in raw)


def test_hard_ground_truth_with_count_checks_scores_one():
    d = difficulty(HARD, count_checks=True)
    items = toy_prompt_set(seed=2, n_train=0, n_eval=40, difficulty="hard", count_checks=True).eval
    prompts = [i.prompt for i in items]
    metrics = ToyEvaluator().evaluate(ground_truth_videos(prompts, 3, d), prompts, [i.checks for i in items])
    assert metrics["overall"] >= 0.98 and metrics["count"] >= 0.98


def test_wrong_videos_score_low(eval_set):
    prompts, checks, videos = eval_set
    evaluator = ToyEvaluator()
    shifted = torch.roll(videos, 1, dims=0)  # every prompt paired with another prompt's ground truth
    noise = torch.rand(videos.shape, generator=torch.Generator().manual_seed(0))
    assert evaluator.evaluate(shifted, prompts, checks)["overall"] <= 0.35
    assert evaluator.evaluate(noise, prompts, checks)["overall"] < 0.15
    assert evaluator.evaluate(torch.zeros_like(videos), prompts, checks)["overall"] < 0.15
    assert evaluator.evaluate(torch.full_like(videos, 0.5), prompts, checks)["overall"] < 0.15
    background = evaluator.evaluate(_background_only(prompts, videos), prompts, checks)
    assert background["background"] == 1.0 and background["object"] == 0.0 and background["motion"] == 0.0
    assert background["overall"] <= 0.25


def test_off_palette_pixels_are_ignored(eval_set):
    prompts, checks, videos = eval_set
    g = torch.Generator().manual_seed(1)
    sprites = (videos - _background_only(prompts, videos)).abs().sum(2, keepdim=True) > 0
    speckle = (torch.rand(videos[:, :, :1].shape, generator=g) < 0.1) & ~sprites
    off_palette = torch.tensor([0.75, 0.25, 0.6])[None, None, :, None, None]  # no named colour within 0.3
    speckled = torch.where(speckle, off_palette.expand_as(videos), videos)
    assert ToyEvaluator().evaluate(speckled, prompts, checks)["overall"] >= 0.98
    jittered = (videos + 0.05 * torch.randn(videos.shape, generator=g)).clamp(0, 1)
    assert ToyEvaluator().evaluate(jittered, prompts, checks)["overall"] >= 0.95


def test_raw_records_are_json_and_per_video(eval_set):
    prompts, checks, videos = eval_set
    mixed = torch.cat([videos[:2], torch.zeros_like(videos[:1])])
    metrics, raw = ToyEvaluator().evaluate_detailed(mixed, prompts[:3], checks[:3])
    json.dumps(raw)
    assert [r["index"] for r in raw] == [0, 1, 2] and raw[2]["prompt"] == prompts[2]
    assert raw[0]["score"] == 1.0 and raw[2]["score"] < 0.3
    assert [c["check"] for c in raw[1]["checks"]] == list(checks[1])
    assert all(c["answer"] in ("yes", "no") for c in raw[2]["checks"])
    # overall is the mean of the pooled categories
    cats = [v for k, v in metrics.items() if k != "overall"]
    assert metrics["overall"] == pytest.approx(float(np.mean(cats)))


@pytest.mark.parametrize("size", range(5, 13))
def test_classify_shape_at_every_size(size):
    assert classify_shape(shape_mask("circle", size).numpy()) == "circle"
    assert classify_shape(shape_mask("square", size).numpy()) == "square"
    if size >= 8:
        assert classify_shape(shape_mask("triangle", size).numpy()) == "triangle"
    assert classify_shape(np.ones((2, size), dtype=bool)) == "other"


def _one_sprite(motion: str, speed: int = 1, size: int = 16, shape: str = "square") -> Scene:
    start = {"static": (5, 5), "right": (1, 5), "left": (9, 5), "down": (5, 1), "up": (5, 9)}[motion]
    scale = size // 16
    return Scene("white", (Sprite("blue", shape, motion, 6 * scale, start[0] * scale, start[1] * scale),),
                 frames=8, height=size, width=size, speed=speed)


@pytest.mark.parametrize("motion", ["static", "left", "right", "up", "down"])
def test_motion_answers(motion):
    evaluator = ToyEvaluator()
    for speed, size in ((1, 16), (2, 32)):
        video = render(_one_sprite(motion, speed, size))[None]
        asked = ["static", "left", "right", "up", "down"]
        questions = [f"Does the blue square {q}?" for q in
                     ["stand still", "move to the left", "move to the right", "move up", "move down"]]
        _, raw = evaluator.evaluate_detailed(video, ["p"], [tuple(questions)])
        answers = {a: c["answer"] for a, c in zip(asked, raw[0]["checks"])}
        assert answers == {a: ("yes" if a == motion else "no") for a in asked}


def test_a_flooded_frame_is_not_an_object():
    flooded = torch.zeros(1, 8, 3, 16, 16)
    flooded[:, :, 0] = 1.0
    metrics = ToyEvaluator().evaluate(flooded, ["p"], [("Is there a red square?", "Is there a red object?", "Is the background black?")])
    assert metrics["overall"] == 0.0


def test_errors_name_the_problem(eval_set):
    prompts, checks, videos = eval_set
    evaluator = ToyEvaluator()
    with pytest.raises(ValueError, match=r"videos\[B, F, 3, H, W\]"):
        evaluator.evaluate(videos[0], prompts[:1], checks[:1])
    with pytest.raises(ValueError, match="one prompt and one check list per video"):
        evaluator.evaluate(videos[:2], prompts[:1], checks[:1])
    with pytest.raises(ValueError, match="video 0 .*not a toy-world check"):
        evaluator.evaluate(videos[:1], prompts[:1], [("Is it pretty?",)])
    with pytest.raises(ValueError, match="tolerance = 0 must be a number > 0"):
        ToyEvaluator(tolerance=0)


def test_registered_and_built_from_the_preset(eval_set):
    gin.parse_config_file(str(PROJECT_ROOT / "components/evaluators/toy.gin"))
    evaluator = registry.build("EVALUATOR")
    assert isinstance(evaluator, ToyEvaluator)
    # the preset's values reach the evaluator, and what it builds scores like a directly constructed one
    assert (evaluator.tolerance, evaluator.min_area) == (0.3, 6)
    prompts, checks, videos = eval_set
    direct = ToyEvaluator(tolerance=0.3, min_area=6)
    mixed = torch.cat([videos[:8], _background_only(prompts[8:16], videos[8:16])])
    assert evaluator.evaluate(mixed, prompts[:16], checks[:16]) == direct.evaluate(mixed, prompts[:16], checks[:16])
    assert evaluator.evaluate(videos[:8], prompts[:8], checks[:8])["overall"] == 1.0
