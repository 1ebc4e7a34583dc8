from __future__ import annotations

import dataclasses
import inspect

import gin
import pytest
import torch

from tvrl_bench import registry
from tvrl_bench.config import PROJECT_ROOT
from tvrl_bench.rewards import toy_oracle as toy_oracle_module
from tvrl_bench.rewards import toy_perception as toy_perception_module
from tvrl_bench.rewards.toy_oracle import ToyOracle
from tvrl_bench.evaluators import toy as evaluator_module
from tvrl_bench.world.checks import answer, checks_for, negative_checks
from tvrl_bench.datasets.toy import toy_prompt_set
from tvrl_bench.world.difficulty import DEFAULT, HARD, difficulty
from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.world.grammar import parse_prompt, prompt_of
from tvrl_bench.world.render import render_batch, sprite_masks
from tvrl_bench.world.scene import SceneDescription, SpriteDescription, ground_truth_scene, sample_scenes


@pytest.fixture(scope="module", params=["fill", "component"])
def oracle(request) -> ToyOracle:
    return ToyOracle(shape_measure=request.param)


def _rewards(oracle: ToyOracle, videos: torch.Tensor, prompts: list[str], checks: list[tuple[str, ...]]) -> torch.Tensor:
    """Mean log p(Yes) over each prompt's checks: R_i of docs/method.md."""
    scores, mask = oracle.score(videos, prompts, checks), oracle.score_mask(checks)
    return (scores * mask).sum(1) / mask.sum(1)


def test_frozen_registered_and_built_from_the_preset(oracle):
    assert all(not p.requires_grad for p in oracle.parameters()) and not oracle.training
    gin.parse_config_file(str(PROJECT_ROOT / "components/rewards/toy_oracle.gin"))
    assert isinstance(registry.build("REWARD"), ToyOracle)


def test_shares_no_code_with_the_evaluator():
    oracle_source, evaluator_source = inspect.getsource(toy_oracle_module), inspect.getsource(evaluator_module)
    assert "evaluator" not in oracle_source.split('"""')[-1]
    assert "evaluator" not in inspect.getsource(toy_perception_module).split('"""')[-1]
    assert "toy_oracle" not in evaluator_source and "rewards" not in evaluator_source.split('"""')[-1]


@pytest.mark.parametrize("measure", ["fill", "component"])
@pytest.mark.parametrize("world", ["default", "hard"])
def test_agrees_with_the_truth_and_the_evaluator_on_ground_truth(world, measure):
    d = difficulty(world, count_checks=True)
    oracle = ToyOracle(difficulty=world, shape_measure=measure)
    scenes = sample_scenes(16 if world == "hard" else 40, 5, d)
    videos = render_batch(scenes)
    prompts = [prompt_of(s) for s in scenes]
    questions = [checks_for(s, count=True) + negative_checks(s, d, rng=i, per_kind=1) for i, s in enumerate(scenes)]
    with torch.no_grad():
        scores = oracle.score(videos, prompts, questions)
    _, raw = ToyEvaluator().evaluate_detailed(videos, prompts, questions)
    agree_truth, agree_evaluator = [], []
    for i, scene in enumerate(scenes):
        for j, q in enumerate(questions[i]):
            says_yes = bool(scores[i, j] > torch.log(torch.tensor(0.5)))
            agree_truth.append(says_yes == answer(scene, q))
            agree_evaluator.append(says_yes == (raw[i]["checks"][j]["answer"] == "yes"))
    assert sum(agree_truth) / len(agree_truth) >= 0.99
    assert sum(agree_evaluator) / len(agree_evaluator) >= 0.99
    positives = torch.cat([scores[i, : len(checks_for(s, count=True))] for i, s in enumerate(scenes)])
    assert float(positives.min()) > -0.1 and float(scores.max()) <= 0.0


def test_scores_wrong_prompt_videos_clearly_lower(oracle):
    items = toy_prompt_set(seed=0, n_train=0, n_eval=48).eval
    prompts, checks = [i.prompt for i in items], [i.checks for i in items]
    videos = render_batch([ground_truth_scene(parse_prompt(p), k) for k, p in enumerate(prompts)])
    with torch.no_grad():
        right = _rewards(oracle, videos, prompts, checks)
        wrong = _rewards(oracle, torch.roll(videos, 1, 0), prompts, checks)
    assert float(right.mean()) > -0.1
    assert float(wrong.mean()) < float(right.mean()) - 2.0
    assert float((right > wrong).float().mean()) >= 0.95


def test_existence_gradients_fall_on_the_named_sprite(oracle):
    scenes = [s for s in sample_scenes(80, 6) if len(s.sprites) == 2][:24]
    assert len(scenes) >= 12, "the sample must hold two-sprite scenes, or the comparison below is empty"
    masks = sprite_masks(scenes)  # [B, 2, F, H, W]
    clean = render_batch(scenes)
    noisy = (clean + 0.02 * torch.randn(clean.shape, generator=torch.Generator().manual_seed(0))).clamp(0, 1)
    wins = total = 0
    for videos in (clean + 0.0, noisy):
        for kind in ("object", "colour", "motion"):
            questions, index, named = [], [], []
            for b, scene in enumerate(scenes):
                for j, sp in enumerate(scene.sprites):
                    text = {
                        "object": f"Is there a {sp.colour} {sp.shape}?",
                        "colour": f"Is there a {sp.colour} object?",
                        "motion": checks_for(scene)[-1 - len(scene.sprites) + j],
                    }[kind]
                    questions.append(text)
                    index.append(b)
                    named.append(j)
            pairs = videos[torch.tensor(index)].clone().requires_grad_(True)
            oracle.score_pairs(pairs, [""] * len(questions), questions).sum().backward()
            grad = pairs.grad.abs().sum(2)  # [P, F, H, W]
            for p, (b, j) in enumerate(zip(index, named)):
                on_named = float((grad[p] * masks[b, j]).sum())
                on_other = float((grad[p] * masks[b, 1 - j]).sum())
                wins += on_named > on_other
                total += 1
    assert total == 2 * 3 * 2 * len(scenes)  # two videos each, three kinds, both sprites of every scene
    assert wins == total


def test_background_gradient_falls_on_the_background(oracle):
    scenes = sample_scenes(20, 8)
    videos = (render_batch(scenes) + 0.02 * torch.randn(20, 8, 3, 16, 16, generator=torch.Generator().manual_seed(1))).clamp(0, 1)
    videos.requires_grad_(True)
    oracle.score_pairs(videos, [""] * 20, [f"Is the background {s.background}?" for s in scenes]).sum().backward()
    grad = videos.grad.abs().sum(2)
    on_sprites = sprite_masks(scenes).any(1)
    assert bool(((grad * ~on_sprites).sum((1, 2, 3)) > 10 * (grad * on_sprites).sum((1, 2, 3))).all())


def test_pairs_are_independent_and_batching_changes_nothing(oracle):
    scenes = sample_scenes(4, 9)
    videos = render_batch(scenes) + 0.01 * torch.randn(4, 8, 3, 16, 16, generator=torch.Generator().manual_seed(2))
    questions = [checks_for(s)[k % len(checks_for(s))] for k, s in enumerate(scenes)]
    questions[3] = "Is there a circle?"
    pairs = videos.clone().requires_grad_(True)
    scores = oracle.score_pairs(pairs, [""] * 4, questions)
    scores[0].backward()
    assert float(pairs.grad[0].abs().sum()) > 0 and float(pairs.grad[1:].abs().sum()) == 0
    one_by_one = torch.cat([oracle.score_pairs(videos[i : i + 1], [""], [questions[i]]) for i in range(4)])
    assert torch.allclose(scores.detach(), one_by_one, atol=1e-5)


def test_gradient_is_an_ascent_direction_for_every_kind():
    """Shape structure uses a stop-gradient normaliser; its gradient must still improve the score. (The component
    measure's values are the located geometry's, constant under tiny steps: tests/rewards/test_toy_sprite_location.py
    follows its gradient in larger steps.)"""
    oracle = ToyOracle()
    scenes = sample_scenes(12, 11, difficulty("default", count_checks=True))
    clean = render_batch(scenes).double()
    videos = (clean + 0.1 * torch.randn(clean.shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64)).clamp(0, 1)
    questions = [checks_for(s, count=True)[k % len(checks_for(s, count=True))] for k, s in enumerate(scenes)]
    videos.requires_grad_(True)
    scores = oracle.score_pairs(videos, [""] * 12, questions)
    scores.sum().backward()
    step = videos.grad / videos.grad.flatten(1).norm(dim=1).clamp_min(1e-30)[:, None, None, None, None]
    with torch.no_grad():
        moved = oracle.score_pairs(videos + 1e-3 * step, [""] * 12, questions)
    before = scores.detach()
    assert bool((moved >= before - 1e-8).all())  # saturated scores (|log p| < 1e-8) may only wobble
    unsure = before < -1e-3
    assert int(unsure.sum()) >= 4 and bool((moved[unsure] > before[unsure]).all())


def _ranks(values: list[float]) -> torch.Tensor:
    """Ranks from 0 with ties sharing their mean rank."""
    x = torch.tensor(values, dtype=torch.float64)
    order = x.argsort()
    ranks = torch.empty_like(x)
    ranks[order] = torch.arange(len(x), dtype=torch.float64)
    for value in x.unique():
        tied = x == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return float((ra * rb).sum() / (ra.norm() * rb.norm()))


def _degraded(scene_description: SceneDescription, k: int) -> list[SceneDescription]:
    """Variants of a description with one or two facts changed, and with sprites dropped."""
    sprites = list(scene_description.sprites)
    first = sprites[0]
    other_colour = next(c for c in DEFAULT.colours if all(c != s.colour for s in sprites))
    other_shape = "square" if first.shape == "circle" else "circle"
    other_motion = "static" if first.motion != "static" else ("left", "right", "up", "down")[k % 4]
    other_background = next(b for b in DEFAULT.backgrounds if b != scene_description.background)
    change = {
        "colour": dataclasses.replace(first, colour=other_colour),
        "shape": dataclasses.replace(first, shape=other_shape),
        "motion": dataclasses.replace(first, motion=other_motion),
    }
    out = [SceneDescription(scene_description.background, (sprite,) + tuple(sprites[1:])) for sprite in change.values()]
    out.append(SceneDescription(other_background, tuple(sprites)))
    out.append(SceneDescription(other_background, (change["shape"],) + tuple(sprites[1:])))
    out.append(SceneDescription(scene_description.background, (dataclasses.replace(change["colour"], shape=other_shape),) + tuple(sprites[1:])))
    if len(sprites) == 2:
        out.append(SceneDescription(scene_description.background, (sprites[1],)))
    return out


def test_rewards_rank_videos_like_the_evaluator(oracle):
    items = toy_prompt_set(seed=1, n_train=0, n_eval=24).eval
    videos, prompts, checks = [], [], []
    g = torch.Generator().manual_seed(4)
    for k, item in enumerate(items):
        description = parse_prompt(item.prompt)
        variants = [description] + _degraded(description, k)
        scenes = []
        for variant in variants:
            try:
                scenes.append(ground_truth_scene(variant, k))
            except ValueError:  # a changed motion that cannot be laid out
                continue
        rendered = render_batch(scenes)
        noisy = (rendered[:2] + 0.2 * torch.randn(rendered[:2].shape, generator=g)).clamp(0, 1)
        blank = torch.zeros_like(rendered[:1])
        for video in torch.cat([rendered, noisy, blank]):
            videos.append(video)
            prompts.append(item.prompt)
            checks.append(item.checks)
    videos = torch.stack(videos)
    _, raw = ToyEvaluator().evaluate_detailed(videos, prompts, checks)
    with torch.no_grad():
        rewards = _rewards(oracle, videos, prompts, checks)
    evaluator_scores = [r["score"] for r in raw]
    assert len(set(evaluator_scores)) > 5
    assert spearman(rewards.tolist(), evaluator_scores) >= 0.8


def test_bad_questions_have_clear_errors(oracle):
    video = torch.zeros(1, 8, 3, 16, 16)
    with pytest.raises(ValueError, match="not a toy-world check"):
        oracle.score_pairs(video, [""], ["Is it pretty?"])
    with pytest.raises(ValueError, match="no template for \\['triangle'\\]"):
        oracle.score_pairs(video, [""], ["Is there a triangle?"])
    with pytest.raises(ValueError, match="1 videos but 2 questions"):
        oracle.score_pairs(video, ["", ""], ["Is there a circle?", "Is there a square?"])


def test_hard_world_uses_triangle_templates():
    oracle = ToyOracle(difficulty="hard")
    scene = ground_truth_scene(SceneDescription("brown", (SpriteDescription("cyan", "triangle", "left"),)), 0, HARD)
    video = render_batch([scene])
    with torch.no_grad():
        yes = oracle.score_pairs(video.expand(3, -1, -1, -1, -1), [""] * 3,
                                 ["Is there a cyan triangle?", "Is there a cyan circle?", "Does the cyan triangle move to the left?"])
    assert float(yes[0]) > -0.1 and float(yes[1]) < -3 and float(yes[2]) > -0.1


def test_spearman_helper_against_a_hand_computed_case():
    # ranks a: 0, 1, 2, 3; ranks b: 0, 2, 1, 3 -> 1 - 6 * 2 / (4 * 15) = 0.8
    assert spearman([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)
    assert spearman([1, 1, 2], [5, 5, 9]) == pytest.approx(1.0)


def test_prob_score_is_the_probability_of_the_log_prob_score():
    scenes = sample_scenes(4, 11, DEFAULT)
    videos = render_batch(scenes)
    checks = [checks_for(s) for s in scenes]
    with torch.no_grad():
        log_p = ToyOracle(score="log_prob").score(videos, [prompt_of(s) for s in scenes], checks)
        p = ToyOracle(score="prob").score(videos, [prompt_of(s) for s in scenes], checks)
    mask = ToyOracle().score_mask(checks)
    assert torch.allclose(p[mask], log_p[mask].exp(), rtol=1e-5)
    assert ToyOracle(score="prob").floor_score == pytest.approx(1e-4)


def test_the_template_measure_stays_available_and_bad_choices_are_clear_errors():
    scenes = sample_scenes(8, 5, DEFAULT)
    videos = render_batch(scenes)
    checks = [checks_for(s) for s in scenes]
    with torch.no_grad():
        scores = ToyOracle(shape_measure="template").score(videos, [prompt_of(s) for s in scenes], checks)
    mask = ToyOracle().score_mask(checks)
    assert float(scores[mask].min()) > -0.1  # ground truth answers every one of its checks yes
    with pytest.raises(ValueError, match="shape_measure = 'outline' must be one of 'fill', 'template', 'component'"):
        ToyOracle(shape_measure="outline")
    with pytest.raises(ValueError, match="score = 'logit' must be one of 'log_prob', 'prob'"):
        ToyOracle(score="logit")
