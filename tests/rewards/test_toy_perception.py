"""The oracle's soft perception (rewards/toy_perception.py) on rendered toy videos: exact gradients of the colour
masks and the motion velocity, and the shape evidence of a rendered sprite's box."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from tvrl_bench.rewards.toy_oracle import ToyOracle
from tvrl_bench.world.difficulty import DEFAULT
from tvrl_bench.world.palette import ALL_COLOURS
from tvrl_bench.world.render import render_batch
from tvrl_bench.world.scene import SceneDescription, SpriteDescription, ground_truth_scene, sample_scenes
from tvrl_bench.world.shapes import shape_mask


@pytest.fixture(scope="module")
def oracle() -> ToyOracle:
    return ToyOracle()


def test_exact_parts_match_finite_differences(oracle):
    """Background questions, the colour masks and the motion velocity have exact gradients."""
    torch.manual_seed(0)  # gradcheck's fast mode projects on random vectors: the same ones whatever ran before
    scenes = sample_scenes(3, 10, dataclasses.replace(DEFAULT, frames=3, min_sprites=2))
    videos = render_batch(scenes).double()
    videos = (videos + 0.03 * torch.randn(videos.shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)).clamp(0.01, 0.99)
    videos.requires_grad_(True)
    questions = [f"Is the background {s.background}?" for s in scenes]
    assert torch.autograd.gradcheck(lambda v: oracle.score_pairs(v, [""] * 3, questions), (videos,), fast_mode=True)
    rows = torch.tensor([0, 2, len(oracle.palette)])  # red, blue, the union of sprite colours
    assert torch.autograd.gradcheck(lambda v: oracle.colour_masks(v, rows), (videos,), fast_mode=True)
    weights = torch.rand(3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    assert torch.autograd.gradcheck(
        lambda v: oracle.velocity(oracle.colour_masks(v, rows), weights), (videos,), fast_mode=True
    )


def test_fill_evidence_of_rendered_sprites_against_their_masks():
    """The box of a rendered sprite: its fill is the shape's own fill ratio, its ring is empty, it spans the box."""
    oracle = ToyOracle()
    for shape in ("circle", "square"):
        scene = ground_truth_scene(SceneDescription("black", (SpriteDescription("red", shape, "static"),)), 3, DEFAULT)
        video = render_batch([scene])
        size = scene.sprites[0].size
        masks = oracle.colour_masks(video, torch.tensor([ALL_COLOURS.index("red")]))
        evidence = oracle.shape_evidence(masks)
        i = oracle.shapes.index(shape)
        expected_fill = float(shape_mask(shape, size).float().mean())
        assert evidence.fill[0, :, i].tolist() == pytest.approx([expected_fill] * video.shape[1], abs=1e-3)
        assert float(evidence.ring[0, :, i].max()) < 1e-3 and float(evidence.reach[0, :, i].min()) > 0.99
        assert float(evidence.mass[0, 0, i]) == pytest.approx(float(shape_mask(shape, size).sum()), abs=1e-2)
