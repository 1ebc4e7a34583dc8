from __future__ import annotations

import pytest
import torch

from tvrl_bench.world.difficulty import HARD
from tvrl_bench.world.grammar import parse_prompt, prompt_of
from tvrl_bench.world.palette import rgb
from tvrl_bench.world.render import ground_truth_scenes, ground_truth_videos, render, render_batch, sprite_masks
from tvrl_bench.world.scene import Scene, Sprite, sample_scenes
from tvrl_bench.world.shapes import shape_mask


def _loop_render(scene: Scene) -> torch.Tensor:
    """An independent renderer: paste each sprite's shape mask at its position, pixel by pixel."""
    video = torch.empty(scene.frames, 3, scene.height, scene.width)
    video[:] = torch.tensor(rgb(scene.background))[:, None, None]
    for sprite in scene.sprites:
        stamp = shape_mask(sprite.shape, sprite.size)
        for t in range(scene.frames):
            x, y = sprite.position(t, scene.speed)
            for r in range(sprite.size):
                for c in range(sprite.size):
                    if stamp[r, c]:
                        video[t, :, y + r, x + c] = torch.tensor(rgb(sprite.colour))
    return video


def test_video_format():
    video = render_batch(sample_scenes(6, 0))
    assert video.shape == (6, 8, 3, 16, 16) and video.dtype == torch.float32
    assert float(video.min()) >= 0 and float(video.max()) <= 1


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_an_independent_loop_renderer(seed):
    scenes = sample_scenes(6, seed)
    batch = render_batch(scenes)
    for i, scene in enumerate(scenes):
        assert torch.equal(batch[i], _loop_render(scene))
    hard = sample_scenes(3, seed, HARD)
    for scene, video in zip(hard, render_batch(hard)):
        assert torch.equal(video, _loop_render(scene))
        assert torch.equal(render(scene), video)


def test_a_hand_placed_circle():
    scene = Scene("black", (Sprite("red", "circle", "right", 5, 2, 3),), frames=8, height=16, width=16, speed=1)
    video = render(scene)
    red = video[:, 0] > 0.5
    assert not red[0, 3, 2] and red[0, 3, 3] and red[0, 5, 2]  # corner cut, top row starts one in
    assert int(red[0].sum()) == 21


@pytest.mark.parametrize("difficulty", [None, HARD], ids=["default", "hard"])
def test_sprites_move_by_speed_pixels_per_frame(difficulty):
    scenes = sample_scenes(40, 3) if difficulty is None else sample_scenes(40, 3, difficulty)
    masks = sprite_masks(scenes)
    for b, scene in enumerate(scenes):
        for j, sprite in enumerate(scene.sprites):
            first = masks[b, j, 0]
            for t in range(1, scene.frames):
                dx, dy = sprite.position(t, scene.speed)[0] - sprite.x, sprite.position(t, scene.speed)[1] - sprite.y
                assert abs(dx) + abs(dy) == (0 if sprite.motion == "static" else scene.speed * t)
                assert torch.equal(masks[b, j, t], torch.roll(first, shifts=(dy, dx), dims=(0, 1)))


def test_paths_of_two_sprites_never_touch():
    scenes = [s for s in sample_scenes(200, 9) if len(s.sprites) == 2]
    masks = sprite_masks(scenes)  # [B, 2, F, H, W]
    paths = masks.any(dim=2).float()  # every pixel a sprite ever covers
    grown = torch.nn.functional.max_pool2d(paths[:, 0:1], 3, stride=1, padding=1)[:, 0]  # path 0 plus its neighbours
    assert not bool((grown.bool() & paths[:, 1].bool()).any())


def test_mixed_sizes_are_rejected():
    with pytest.raises(ValueError, match="must share"):
        render_batch(sample_scenes(1, 0) + sample_scenes(1, 0, HARD))


def test_ground_truth_videos_are_reproducible_and_follow_the_prompt():
    prompts = [prompt_of(s) for s in sample_scenes(10, 4)]
    assert torch.equal(ground_truth_videos(prompts, 1), ground_truth_videos(prompts, 1))
    for prompt, scene in zip(prompts, ground_truth_scenes(prompts, 1)):
        assert scene.description() == parse_prompt(prompt)
