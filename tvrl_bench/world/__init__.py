"""The embedded toy world: scenes, the prompt grammar, checks and the renderer (a pure domain package).

Small modules, one job each:
- palette.py / vocabulary.py: colour, shape and motion names.       difficulty.py: `Difficulty`, presets.
- scene.py: `Scene`, `SceneDescription`, `sample_scenes(n, rng, difficulty)`, `ground_truth_scene`.
- shapes.py: sprite geometry.   grammar.py: `prompt_of`, `parse_prompt`.
- checks.py: `checks_for`, `negative_checks`, `parse_check -> CheckSpec`, `answer`.
- render.py: `render_batch(scenes) -> video[B, F, 3, H, W]`, `sprite_masks`, `ground_truth_videos`.
The toy world's dataset (`datasets/toy.py`) and exact evaluator (`evaluators/toy.py`) are components built on
this package; it imports nothing of tvrl-bench outside itself.
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
