"""The embedded toy worlds: scenes, the prompt grammar, checks and the renderers (a pure domain package).

Two worlds: the sprite world (moving sprites; the toy_v1..v3 profiles), exported here, and the slot world
(slots.py: one coloured square and one check per slot; the default profile), imported from its module.
Small modules, one job each:
- palette.py / vocabulary.py: colour, shape, motion and slot names.   difficulty.py: `Difficulty`, presets.
- scene.py: `Scene`, `SceneDescription`, `sample_scenes(n, rng, difficulty)`, `ground_truth_scene`.
- shapes.py: sprite geometry.   grammar.py: `prompt_of`, `parse_prompt`.
- checks.py: `checks_for`, `negative_checks`, `parse_check -> CheckSpec`, `answer`.
- render.py: `render_batch(scenes) -> video[B, F, 3, H, W]`, `sprite_masks`, `ground_truth_videos`.
- slots.py: the slot world: `SlotWorld`, `SlotScene`, its prompts and checks, `render_slots(scenes) -> video[B, F,
  3, H, W]`.   vivid.py: the palette's vivid lures of a one-channel colour (`lures`) and a vivid-biased labeler's
  Yes probability (a learned critic's bias, docs/toy/critics.md).
- declaration.py: which world a component serves and a policy checkpoint was trained on, declared once
  (`served_worlds`, `checkpoint_world`, `PROFILES`).
The toy datasets (`datasets/toy.py`, `datasets/toy_slots.py`) and the exact evaluator (`evaluators/toy.py`) are
components built on this package; it imports nothing of tvrl-bench outside itself.
"""

from tvrl_bench.world.checks import CheckSpec, answer, checks_for, negative_checks, parse_check
from tvrl_bench.world.difficulty import DEFAULT, HARD, Difficulty, difficulty, from_knobs
from tvrl_bench.world.grammar import parse_prompt, prompt_of
from tvrl_bench.world.render import ground_truth_videos, render, render_batch, sprite_masks
from tvrl_bench.world.scene import Scene, SceneDescription, Sprite, SpriteDescription, ground_truth_scene, sample_scenes

__all__ = [
    "CheckSpec", "answer", "checks_for", "negative_checks", "parse_check",
    "DEFAULT", "HARD", "Difficulty", "difficulty", "from_knobs",
    "parse_prompt", "prompt_of",
    "ground_truth_videos", "render", "render_batch", "sprite_masks",
    "Scene", "SceneDescription", "Sprite", "SpriteDescription", "ground_truth_scene", "sample_scenes",
]
