"""The embedded toy world: scenes, the prompt grammar, checks, the renderer, datasets and the exact evaluator.

Small modules, one job each:
- palette.py / vocabulary.py: colour, shape and motion names.       difficulty.py: `Difficulty`, presets.
- scene.py: `Scene`, `SceneDescription`, `sample_scenes(n, rng, difficulty)`, `ground_truth_scene`.
- shapes.py: sprite geometry.   grammar.py: `prompt_of`, `parse_prompt`.
- checks.py: `checks_for`, `negative_checks`, `parse_check -> CheckSpec`, `answer`.
- render.py: `render_batch(scenes) -> video[B, F, 3, H, W]`, `sprite_masks`, `ground_truth_videos`.
- datasets.py: `datasets.toy` (a PromptSet), `training_batch(n, rng, difficulty, exclude)`.
- evaluator.py: `evaluators.toy`, the exact non-differentiable evaluator.
Importing this package registers `datasets.toy` and `evaluators.toy`.
"""

from tvrl_bench.world.checks import CheckSpec, answer, checks_for, negative_checks, parse_check
from tvrl_bench.world.datasets import ToyBatch, signatures, toy_prompt_set, training_batch
from tvrl_bench.world.difficulty import DEFAULT, HARD, Difficulty, difficulty, from_knobs
from tvrl_bench.world.evaluator import ToyEvaluator
from tvrl_bench.world.grammar import parse_prompt, prompt_of
from tvrl_bench.world.render import ground_truth_videos, render, render_batch, sprite_masks
from tvrl_bench.world.scene import Scene, SceneDescription, Sprite, SpriteDescription, ground_truth_scene, sample_scenes

__all__ = [
    "CheckSpec", "answer", "checks_for", "negative_checks", "parse_check",
    "ToyBatch", "signatures", "toy_prompt_set", "training_batch",
    "DEFAULT", "HARD", "Difficulty", "difficulty", "from_knobs",
    "ToyEvaluator", "parse_prompt", "prompt_of",
    "ground_truth_videos", "render", "render_batch", "sprite_masks",
    "Scene", "SceneDescription", "Sprite", "SpriteDescription", "ground_truth_scene", "sample_scenes",
]
