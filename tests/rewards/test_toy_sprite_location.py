"""The toy oracle's component measure (rewards/toy_sprite_location.py): hard location, bands and rules checked against
the exact evaluator's independent code, straight-through values, and a gradient that moves the evaluator."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tvrl_bench.evaluators.toy import ToyEvaluator, classify_shape
from tvrl_bench.rewards.toy_sprite_location import locate, reads_as, segment, straight_through
from tvrl_bench.rewards.toy_oracle import ToyOracle
from tvrl_bench.world.checks import checks_for
from tvrl_bench.world.difficulty import difficulty
from tvrl_bench.world.grammar import prompt_of
from tvrl_bench.world.palette import ALL_COLOURS, SPRITE_COLOURS, rgb
from tvrl_bench.world.render import render_batch
from tvrl_bench.world.scene import sample_scenes
from tvrl_bench.world.vocabulary import MOTIONS


def test_a_box_reads_as_the_shape_the_evaluator_classifies():
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(3000):
        h, w = rng.integers(3, 10, size=2)
        crop = rng.random((h, w)) < rng.uniform(0.4, 1.0)
        crop[0, rng.integers(w)] = crop[-1, rng.integers(w)] = crop[rng.integers(h), 0] = crop[rng.integers(h), -1] = True
        area = int(crop.sum())
        rows = crop.sum(1)
        asymmetry = (rows[(h + 1) // 2:].sum() - rows[: h // 2].sum()) / area
        seen = classify_shape(crop)
        for shape in ("square", "circle", "triangle"):
            assert reads_as(area / (h * w), asymmetry, min(h / w, w / h), shape) == (seen == shape), (crop, shape, seen)
            checked += 1
    assert checked == 9000


def test_motion_rules_decide_like_the_evaluator_away_from_their_boundaries():
    oracle, evaluator = ToyOracle(shape_measure="component"), ToyEvaluator()
    v = torch.empty(4000, 2).uniform_(-2.0, 2.0, generator=torch.Generator().manual_seed(1))
    v[:800] *= 0.3  # plenty of static ones
    speed, ratio = v.abs().amax(1), v.abs().amax(1) / v.abs().amin(1).clamp_min(1e-9)
    clear = ((speed - 0.4).abs() > 0.05) & ((ratio - 2).abs() > 0.2)
    for m, motion in enumerate(MOTIONS):
        p = oracle.log_motion_rules(v, torch.full((len(v),), m)).exp()
        detected = torch.tensor([evaluator.motion_of((float(x), float(y))) == motion for x, y in v])
        assert bool(((p > 0.5) == detected)[clear].all()), motion
        assert int(detected[clear].sum()) > 50


def test_existence_needs_the_evaluators_share_of_frames():
    oracle = ToyOracle(shape_measure="component")
    frames_seen = torch.tensor([[1.0] * 4 + [0.0] * 4, [1.0] * 3 + [0.0] * 5])
    p = oracle.log_exist(frames_seen.clamp_min(1e-12).log()).exp()
    assert float(p[0]) > 0.5 > float(p[1])


def test_locate_prefers_the_asked_shape_then_size_and_reports_absence():
    h = w = 16
    red, blue = rgb("red"), rgb("blue")
    frame = np.zeros((3, h, w), dtype=np.float32)
    frame[:, 1:6, 1:6] = np.array(red)[:, None, None]  # a 5 x 5 red square (25 px)
    frame[:, 8:15, 8:15] = np.array(red)[:, None, None]  # a 7 x 7 red L (13 px): only its left and bottom edges
    frame[:, 8:14, 9:15] = 0
    video = torch.from_numpy(np.stack([frame, frame]))[None].expand(3, -1, -1, -1, -1)  # [3, 2, 3, 16, 16]
    palette = torch.tensor([rgb(c) for c in ALL_COLOURS])
    labels = segment(video, palette, 0.3)
    rows = [ALL_COLOURS.index(c) for c in SPRITE_COLOURS]
    r, b = list(SPRITE_COLOURS).index("red"), list(SPRITE_COLOURS).index("blue")
    at = locate(labels, rows, [[r], [r], [b]], ["circle", "square", None], 6, 0.75, torch.device("cpu"))
    assert bool(at.found[:2].all()) and not bool(at.found[2].any())
    # no red circle: the largest red component of sprite size (the square); a red square: the square
    assert int(at.pixels[0, 0].sum()) == 25 and int(at.box[0, 0, 1:6, 1:6].sum()) == 25
    assert int(at.pixels[1, 0].sum()) == 25
    assert int(at.top[1, 0].sum()) == 10 and int(at.bottom[1, 0].sum()) == 10  # rows 1-2 and 4-5 of the 5-row box
    del blue


def test_soft_values_have_their_exact_gradient():
    """The default component values are soft features inside the located box: their gradient is their own
    (finite differences in float64), which the straight-through option's is not."""
    oracle = ToyOracle(shape_measure="component")
    scenes = sample_scenes(3, 7)
    base = render_batch(scenes).double()
    videos = (base + 0.25 * torch.randn(base.shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)).clamp(0.01, 0.99)
    questions = [checks_for(s)[1] for s in scenes]
    x = videos.clone().requires_grad_(True)
    oracle.score_pairs(x, [""] * 3, questions).sum().backward()
    direction = torch.randn(videos.shape, generator=torch.Generator().manual_seed(4), dtype=torch.float64) * 1e-6
    with torch.no_grad():
        change = (oracle.score_pairs(videos + direction, [""] * 3, questions) - oracle.score_pairs(videos - direction, [""] * 3, questions)).sum() / 2
    assert float(change) == pytest.approx(float((x.grad * direction).sum()), rel=1e-4, abs=1e-12)
    assert abs(float((x.grad * direction).sum())) > 1e-9


def test_straight_through_keeps_the_hard_value_and_the_soft_gradient():
    soft = torch.tensor([0.3, 0.7], requires_grad=True)
    out = straight_through(torch.tensor([1.0, 0.0]), soft * 2)
    out.sum().backward()
    assert out.tolist() == [1.0, 0.0] and soft.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("values", ["soft", "hard"])
def test_following_the_gradient_in_pixels_makes_the_evaluator_agree(values):
    """Ascent on the pixels of noisy ground-truth videos (sign steps of 0.03, a step the located geometry can
    follow) raises the critic and the evaluator's score of the prompts' own checks."""
    oracle, evaluator = ToyOracle(shape_measure="component", component_values=values), ToyEvaluator()
    scenes = sample_scenes(12, 3)
    prompts, checks = [prompt_of(s) for s in scenes], [checks_for(s) for s in scenes]
    clean = render_batch(scenes)
    videos = (clean + 0.3 * torch.randn(clean.shape, generator=torch.Generator().manual_seed(0))).clamp(0, 1)
    mask = oracle.score_mask(checks)
    rewards, overall = [], []
    for _ in range(16):
        x = videos.clone().requires_grad_(True)
        reward = (oracle.score(x, prompts, checks) * mask).sum() / mask.sum()
        reward.backward()
        rewards.append(float(reward.detach()))
        overall.append(evaluator.evaluate_detailed(videos, prompts, checks)[0]["overall"])
        videos = (videos + 0.03 * x.grad.sign()).clamp(0, 1).detach()
    assert rewards[-1] > rewards[0] + 1.0
    assert overall[0] < 0.4 and overall[-1] > overall[0] + 0.3


@pytest.mark.parametrize("values", ["soft", "hard"])
@pytest.mark.parametrize("world", ["default", "hard"])
def test_every_check_of_ground_truth_is_yes_with_a_gradient_on_its_sprite(world, values):
    oracle = ToyOracle(difficulty=world, shape_measure="component", component_values=values)
    scenes = sample_scenes(6, 4, difficulty(world))
    videos = render_batch(scenes).requires_grad_(True)
    checks = [checks_for(s) for s in scenes]
    scores = oracle.score(videos, [prompt_of(s) for s in scenes], checks)
    mask = oracle.score_mask(checks)
    assert float(scores[mask].detach().min()) > -0.05
    scores[mask].sum().backward()
    assert bool((videos.grad.flatten(1).abs().sum(1) > 0).all())


def test_the_v2_profile_trains_the_v2_base_against_the_component_critic():
    import gin

    from tvrl_bench import registry
    from tvrl_bench.config import PROJECT_ROOT, load_config

    load_config([str(PROJECT_ROOT / "components/profiles/toy_v2.gin")], [])
    try:
        reward = registry.build("REWARD")
        assert isinstance(reward, ToyOracle) and reward.shape_measure == "component"
        assert gin.query_parameter("policies.toy.base") == "v2"
    finally:
        gin.clear_config()
