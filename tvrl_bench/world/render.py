"""The renderer: scenes -> videos, vectorised over scenes, sprites, frames and pixels.

`render_batch(scenes) -> video[B, F, 3, H, W]` float32 in [0, 1]: crisp sprites (exact palette colours, no
anti-aliasing) over the background; all scenes must share (F, H, W). `render(scene) -> [F, 3, H, W]`.
`sprite_masks(scenes) -> [B, S, F, H, W]` bool: the pixels each sprite covers (S = most sprites of any scene),
for tests and credit analysis. `ground_truth_videos(prompts, seed, difficulty)` renders a ground truth for each
prompt (sizes and positions drawn from the seed, consistent with the prompt).
"""

from __future__ import annotations

import torch

from tvrl_bench.world.difficulty import DEFAULT, Difficulty
from tvrl_bench.world.grammar import parse_prompt
from tvrl_bench.world.palette import rgb
from tvrl_bench.world.scene import Rng, Scene, as_random, ground_truth_scene
from tvrl_bench.world.shapes import inside_shape, shape_code
from tvrl_bench.world.vocabulary import MOTION_STEPS


def _common_size(scenes: list[Scene]) -> tuple[int, int, int]:
    if not scenes:
        raise ValueError("render_batch needs at least one scene")
    sizes = {(s.frames, s.height, s.width) for s in scenes}
    if len(sizes) != 1:
        raise ValueError(f"scenes of one batch must share (frames, height, width); got {sorted(sizes)}")
    return sizes.pop()


def sprite_masks(scenes: list[Scene]) -> torch.Tensor:
    """[B, S, F, H, W] bool: pixels covered by sprite s of scene b at each frame (False for missing sprites)."""
    frames, height, width = _common_size(scenes)
    slots = max(len(s.sprites) for s in scenes)
    table = torch.zeros(len(scenes), max(slots, 1), 7)  # present, shape, size, x, y, vx, vy
    for b, scene in enumerate(scenes):
        for j, sp in enumerate(scene.sprites):
            dx, dy = MOTION_STEPS[sp.motion]
            table[b, j] = torch.tensor(
                [1.0, shape_code(sp.shape), sp.size, sp.x, sp.y, dx * scene.speed, dy * scene.speed]
            )
    present, code, size, x0, y0, vx, vy = (table[..., i] for i in range(7))
    t = torch.arange(frames, dtype=torch.float32)
    x = x0[..., None] + vx[..., None] * t  # [B, S, F]
    y = y0[..., None] + vy[..., None] * t
    u = torch.arange(width, dtype=torch.float32) + 0.5 - x[..., None, None]  # [B, S, F, 1, W]
    v = torch.arange(height, dtype=torch.float32)[:, None] + 0.5 - y[..., None, None]  # [B, S, F, H, 1]
    expand = (...,) + (None,) * 3
    inside = inside_shape(code[expand], u, v, size[expand])
    return inside & (present[expand] > 0)


def render_batch(scenes: list[Scene]) -> torch.Tensor:
    """video[B, F, 3, H, W] float32 in [0, 1]; later sprites are drawn over earlier ones (paths never overlap)."""
    masks = sprite_masks(scenes)  # [B, S, F, H, W]
    b, slots, frames, height, width = masks.shape
    background = torch.tensor([rgb(s.background) for s in scenes])  # [B, 3]
    colours = torch.zeros(b, slots, 3)
    for i, scene in enumerate(scenes):
        for j, sp in enumerate(scene.sprites):
            colours[i, j] = torch.tensor(rgb(sp.colour))
    video = background[:, None, :, None, None].expand(b, frames, 3, height, width)
    for j in range(slots):
        video = torch.where(masks[:, j, :, None], colours[:, j, None, :, None, None], video)
    return video.contiguous()


def render(scene: Scene) -> torch.Tensor:
    """video[F, 3, H, W] float32 in [0, 1] of one scene."""
    return render_batch([scene])[0]


def ground_truth_scenes(prompts: list[str], rng: Rng, difficulty: Difficulty = DEFAULT) -> list[Scene]:
    """One scene per prompt consistent with it, sizes and positions drawn from `rng` (reproducible)."""
    r = as_random(rng)
    return [ground_truth_scene(parse_prompt(p), r, difficulty) for p in prompts]


def ground_truth_videos(prompts: list[str], rng: Rng, difficulty: Difficulty = DEFAULT) -> torch.Tensor:
    """video[B, F, 3, H, W]: a rendered ground truth for each prompt."""
    return render_batch(ground_truth_scenes(prompts, rng, difficulty))
