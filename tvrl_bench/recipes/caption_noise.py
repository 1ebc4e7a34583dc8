"""Noisy captions: ground-truth scenes whose prompt names a sprite's attribute wrongly, as web captions mislabel.

A base fine-tuned on such captions can still draw every colour (it has seen them all), but it has learned that a
colour word is only partly tied to the colour drawn: it draws what it was asked only part of the time. That is an
error of alignment, which a few dozen RL steps can fix, rather than one of capacity (docs/toy/policy.md).

One caption is corrupted with probability `p`: one of its sprites, drawn uniformly, has its colour (or shape)
replaced by another of the difficulty's colours (shapes), drawn uniformly; the background, the motions and the
video are left as they are. The corruption acts on the scene description and the prompt is written from it by the
grammar, so a corrupted caption is still a well-formed toy prompt.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from tvrl_bench.world.difficulty import DEFAULT, Difficulty
from tvrl_bench.world.grammar import prompt_of
from tvrl_bench.world.scene import SceneDescription

KINDS = ("colour", "shape")


@dataclass(frozen=True)
class CaptionNoise:
    """p: the probability that a caption is corrupted; kind: the attribute swapped ('colour' or 'shape')."""

    p: float = 0.0
    kind: str = "colour"

    def __post_init__(self) -> None:
        if not 0 <= self.p <= 1:
            raise ValueError(f"CaptionNoise p={self.p}: a probability must lie in [0, 1]")
        if self.kind not in KINDS:
            raise ValueError(f"CaptionNoise kind={self.kind!r}: choose one of {', '.join(map(repr, KINDS))}")


def misdescribe(scene: SceneDescription, noise: CaptionNoise, rng: random.Random,
                difficulty: Difficulty = DEFAULT) -> SceneDescription:
    """`scene` as a noisy caption states it: with probability noise.p one sprite's colour (shape) replaced by a
    different one of the difficulty's; otherwise `scene` itself. Draws from `rng` in a fixed order (one uniform,
    then a sprite and a replacement only when corrupting), so a seed fixes every caption."""
    if rng.random() >= noise.p:
        return scene
    index = rng.randrange(len(scene.sprites))
    sprite = scene.sprites[index]
    field = noise.kind
    vocabulary = difficulty.colours if field == "colour" else difficulty.shapes
    others = [word for word in vocabulary if word != getattr(sprite, field)]
    swapped = replace(sprite, **{field: rng.choice(others)})
    return replace(scene, sprites=scene.sprites[:index] + (swapped,) + scene.sprites[index + 1:])


def captions(batch, noise: CaptionNoise, rng: random.Random) -> tuple[str, ...]:
    """The prompts a training batch (datasets.toy.ToyBatch) is fitted to: its own when noise.p is 0 (drawing
    nothing from `rng`), else each scene's caption as `misdescribe` writes it, in batch order."""
    if not noise.p:
        return batch.prompts
    return tuple(prompt_of(misdescribe(scene.description(), noise, rng)) for scene in batch.scenes)
