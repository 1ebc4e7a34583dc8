"""The toy critic's training data: the recipe's hyperparameters, (video, question, yes/no) examples with near
misses, the curriculum over check kinds, and the augmentations that make the critic robust to imperfect videos.
See `pretrain_critic.py` for the recipe as a whole."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

import torch
import torch.nn.functional as F

from tvrl_bench.datasets.toy import signatures, toy_prompt_set, training_batch
from tvrl_bench.world.checks import CheckSpec, checks_for, negative_checks, parse_check
from tvrl_bench.world.difficulty import Difficulty
from tvrl_bench.world.scene import Scene

DEFAULT_STEPS = 3000


@dataclass(frozen=True)
class CriticRecipe:
    """Hyperparameters of critic pretraining (written to pretrain.json)."""

    videos_per_step: int = 16
    questions_per_video: int = 4
    lr: float = 1e-3
    weight_decay: float = 1e-4
    warmup_steps: int = 100
    final_lr_fraction: float = 0.1
    grad_clip: float = 1.0
    # (fraction of the steps, kinds asked from then on); count joins the last stage where the difficulty has it.
    curriculum: tuple[tuple[float, tuple[str, ...]], ...] = (
        (0.0, ("colour",)),
        (0.05, ("object", "colour", "shape", "motion")),
        (0.4, ("object", "colour", "shape", "motion", "background")),
    )
    kind_weights: tuple[tuple[str, float], ...] = (
        ("object", 2.0), ("colour", 1.0), ("shape", 1.0), ("motion", 2.0), ("background", 1.0), ("count", 1.0),
    )
    near_miss: float = 0.5
    augment_p: float = 0.3
    eval_every: int = 250
    validation_videos: int = 128


def default_eval_signatures() -> frozenset[tuple]:
    """Scene signatures of the default `datasets.toy` eval prompts: never trained on, never validated on."""
    return signatures(toy_prompt_set(n_train=0).eval)


@lru_cache(maxsize=8192)
def _spec(text: str) -> CheckSpec:
    return parse_check(text)


def _near_miss(spec: CheckSpec, scene: Scene) -> bool:
    """A No check about a sprite that is in the scene (its colour), wrong only in shape or motion."""
    sprite = next((s for s in scene.sprites if s.colour == spec.colour), None)
    if sprite is None:
        return False
    if spec.kind == "motion":
        return spec.shape == sprite.shape
    return spec.kind == "object"


def question_examples(
    scenes: list[Scene], kinds: tuple[str, ...], per_video: int, rng: random.Random, difficulty: Difficulty,
    recipe: CriticRecipe,
) -> tuple[list[int], list[str], list[int]]:
    """(video index, question, label 1 = Yes) triples: `per_video` per scene, kinds drawn by weight, Yes/No 1/2."""
    weights = dict(recipe.kind_weights)
    index, questions, labels = [], [], []
    for i, scene in enumerate(scenes):
        yes = [_spec(t) for t in checks_for(scene, difficulty.count_checks)]
        no = [_spec(t) for t in negative_checks(scene, difficulty)]
        for _ in range(per_video):
            for _attempt in range(20):
                kind = rng.choices(kinds, weights=[weights.get(k, 1.0) for k in kinds])[0]
                label = rng.random() < 0.5
                pool = [s for s in (yes if label else no) if s.kind == kind]
                if not label and kind in ("object", "motion"):
                    near = [s for s in pool if _near_miss(s, scene)]
                    if near and rng.random() < recipe.near_miss:
                        pool = near
                if pool:
                    break
            if not pool:
                raise ValueError(
                    f"pretrain_critic: no {'Yes' if label else 'No'} check of kinds {kinds} for scene {scene}; "
                    f"difficulty '{difficulty.name}' has too few colours, shapes or backgrounds to ask balanced questions"
                )
            index.append(i)
            questions.append(rng.choice(pool).text())
            labels.append(int(label))
    return index, questions, labels


def validation_examples(
    scenes: list[Scene], kinds: tuple[str, ...], rng: random.Random, difficulty: Difficulty
) -> tuple[list[int], list[str], list[int], list[str]]:
    """Per scene and kind one Yes and one No question (where the scene has one): (index, question, label, kind)."""
    index, questions, labels, of_kind = [], [], [], []
    for i, scene in enumerate(scenes):
        yes = [_spec(t) for t in checks_for(scene, difficulty.count_checks)]
        no = [_spec(t) for t in negative_checks(scene, difficulty)]
        for kind in kinds:
            for label, pool in ((1, yes), (0, no)):
                pool = [s for s in pool if s.kind == kind]
                if pool:
                    index.append(i)
                    questions.append(rng.choice(pool).text())
                    labels.append(label)
                    of_kind.append(kind)
    return index, questions, labels, of_kind


def degrade(videos: torch.Tensor, p: float, generator: torch.Generator) -> torch.Tensor:
    """videos[B, F, 3, H, W] in [0, 1] with, each with probability p per video: a random colour transform, a fade
    towards the frame's median colour, a 3 x 3 Gaussian blur (sigma 0.3-0.9 px), pixel noise (std up to 0.08)."""
    b, f, c, h, w = videos.shape

    def chosen() -> torch.Tensor:
        return (torch.rand(b, generator=generator) < p).float()[:, None, None, None, None]

    x = videos
    colour = torch.eye(3) + 0.07 * torch.randn(b, 3, 3, generator=generator)
    shift = 0.05 * torch.randn(b, 3, generator=generator)
    mixed = torch.einsum("bij,bfjhw->bfihw", colour, x) + shift[:, None, :, None, None]
    use = chosen()
    x = use * mixed + (1 - use) * x

    median = x.flatten(-2).median(-1).values[..., None, None]  # [B, F, 3, 1, 1]
    keep = 0.6 + 0.4 * torch.rand(b, generator=generator)[:, None, None, None, None]
    use = chosen()
    x = use * (median + keep * (x - median)) + (1 - use) * x

    sigma = 0.3 + 0.6 * torch.rand(b, generator=generator)
    taps = torch.exp(-torch.tensor([-1.0, 0.0, 1.0])[None] ** 2 / (2 * sigma[:, None] ** 2))
    taps = taps / taps.sum(1, keepdim=True)  # [B, 3]
    kernel = (taps[:, :, None] * taps[:, None, :]).repeat_interleave(f * c, 0)[:, None]  # [B*F*3, 1, 3, 3]
    padded = F.pad(x.reshape(1, b * f * c, h, w), (1, 1, 1, 1), mode="replicate")
    blurred = F.conv2d(padded, kernel, groups=b * f * c).reshape(b, f, c, h, w)
    use = chosen()
    x = use * blurred + (1 - use) * x

    std = 0.08 * torch.rand(b, generator=generator)[:, None, None, None, None]
    use = chosen()
    x = x + use * std * torch.randn(x.shape, generator=generator)
    return x.clamp(0, 1)


def curriculum_kinds(step: int, steps: int, recipe: CriticRecipe, difficulty: Difficulty) -> tuple[str, ...]:
    """The check kinds asked at `step` of `steps`: the last curriculum stage whose start fraction has passed."""
    kinds = recipe.curriculum[0][1]
    for start, stage in recipe.curriculum:
        if step >= int(start * steps):
            kinds = stage
    if difficulty.count_checks and kinds == recipe.curriculum[-1][1]:
        kinds = kinds + ("count",)
    return kinds


def full_curriculum_step(steps: int, recipe: CriticRecipe) -> int:
    """The first step of the last curriculum stage (where every kind is asked)."""
    return int(recipe.curriculum[-1][0] * steps)


@dataclass(frozen=True)
class StepBatch:
    """One training step's data: scenes, (augmented) videos[B, F, 3, H, W], and per question its video index,
    text, label (1 = Yes) and the kinds the curriculum allowed."""

    scenes: tuple[Scene, ...]
    videos: torch.Tensor
    index: list[int]
    questions: list[str]
    labels: list[int]
    kinds: tuple[str, ...]


def step_batch(
    step: int, steps: int, recipe: CriticRecipe, difficulty: Difficulty, excluded: frozenset[tuple],
    data_rng: random.Random, augment_rng: torch.Generator,
) -> StepBatch:
    """Fresh scenes (none in `excluded`), their questions by the curriculum, and the augmented videos."""
    kinds = curriculum_kinds(step, steps, recipe, difficulty)
    batch = training_batch(recipe.videos_per_step, data_rng, difficulty, exclude=excluded)
    index, questions, labels = question_examples(
        list(batch.scenes), kinds, recipe.questions_per_video, data_rng, difficulty, recipe
    )
    videos = degrade(batch.videos, recipe.augment_p, augment_rng)
    return StepBatch(batch.scenes, videos, index, questions, labels, kinds)
