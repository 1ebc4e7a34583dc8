"""The worlds a toy policy is pretrained on: where its training videos, captions, words and held-out prompts come
from. `WORLDS["sprites"]` is the sprite world (world/, datasets/toy.py), `WORLDS["slots"]` the slot world
(world/slots.py, datasets/toy_slots.py); a recipe names one (`PolicyRecipe.world`).

Each world gives: its video size (frames, height, width); `vocabulary()`, every word its grammar writes (the text
encoder's, in a reproducible order); `split(seed, n_val, n_eval)`, the validation prompts, the eval prompts trials
are scored on (its dataset's default eval set) and the scenes to keep out of pretraining; `batch(n, rng, excluded)`,
rendered ground truth of n fresh scenes with their prompts (what `captions` corrupts); `signatures(items)`, the
scenes of PromptItems, to exclude; `captions(batch, noise, rng)`, the prompts a batch is fitted to under caption
noise.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from tvrl_bench.recipes.caption_noise import CaptionNoise, captions as sprite_captions


@dataclass(frozen=True)
class TrainingData:
    """Rendered ground truth videos[B, F, 3, H, W] in [0, 1] with their prompts, and what the world's caption noise
    needs of them (`scenes`)."""

    videos: torch.Tensor
    prompts: tuple[str, ...]
    scenes: tuple[Any, ...]


class PretrainWorld(Protocol):  # the interface pretrain_policy and distill_ceiling use
    frames: int
    height: int
    width: int

    def vocabulary(self) -> list[str]: ...
    def split(self, seed: int, n_val: int, n_eval: int) -> tuple[tuple, tuple, frozenset]: ...
    def batch(self, n: int, rng: random.Random, excluded: frozenset) -> TrainingData: ...
    def signatures(self, items: list) -> frozenset: ...
    def captions(self, data: TrainingData, noise: CaptionNoise, rng: random.Random) -> tuple[str, ...]: ...


# Offset of the validation prompts' stream from the pretraining seed (shared by both worlds).
VALIDATION_STREAM = 7_919


class _WorldData:
    """What both worlds share: the split, from each world's `eval_set()` (its dataset's default eval prompts),
    `validation(n, rng, exclude)` (n PromptItems of fresh scenes) and `signatures(items)`."""

    dataset = ""

    def split(self, seed: int, n_val: int, n_eval: int) -> tuple[tuple, tuple, frozenset]:
        """(validation PromptItems, eval PromptItems, signatures kept out of pretraining): eval is the first n_eval
        prompts of the world's dataset's default eval set, validation n_val further scenes drawn from the seed."""
        eval_set = self.eval_set()
        if n_eval > len(eval_set):
            raise ValueError(f"n_eval={n_eval}: the {self.dataset} eval set has {len(eval_set)} prompts")
        eval_signatures = self.signatures(eval_set)
        validation = self.validation(n_val, random.Random(seed + VALIDATION_STREAM), eval_signatures)
        return validation, tuple(eval_set[:n_eval]), eval_signatures | self.signatures(validation)


class SpriteWorldData(_WorldData):
    """The sprite world at its default difficulty (world/difficulty.py DEFAULT)."""

    dataset = "datasets.toy"

    def __init__(self) -> None:
        from tvrl_bench.world.difficulty import DEFAULT

        self.difficulty = DEFAULT
        self.frames, self.height, self.width = DEFAULT.frames, DEFAULT.height, DEFAULT.width

    def vocabulary(self) -> list[str]:
        """Every word the sprite grammar writes, for every colour, shape, motion and background of the palette,
        enumerated through `prompt_of` in first-seen order (so it is reproducible)."""
        from tvrl_bench.world.grammar import prompt_of
        from tvrl_bench.world.palette import BACKGROUNDS, SPRITE_COLOURS
        from tvrl_bench.world.scene import SceneDescription, SpriteDescription
        from tvrl_bench.world.vocabulary import MOTIONS, SHAPES

        words: dict[str, None] = {}
        colours = list(SPRITE_COLOURS)
        for background in BACKGROUNDS:
            for i, colour in enumerate(colours):
                for shape in SHAPES:
                    for motion in MOTIONS:
                        first = SpriteDescription(colour, shape, motion)
                        second = SpriteDescription(colours[(i + 1) % len(colours)], shape, motion)
                        for sprites in ((first,), (first, second)):
                            for word in prompt_of(SceneDescription(background, sprites)).lower().split():
                                words.setdefault(word, None)
        return list(words)

    def eval_set(self) -> tuple:
        from tvrl_bench.datasets.toy import toy_prompt_set

        return toy_prompt_set().eval

    def validation(self, n: int, rng: random.Random, exclude: frozenset) -> tuple:
        from tvrl_bench.datasets.toy import prompt_item, unique_descriptions

        return tuple(prompt_item(s, self.difficulty.count_checks)
                     for s in unique_descriptions(n, rng, self.difficulty, exclude=exclude))

    def batch(self, n: int, rng: random.Random, excluded: frozenset) -> TrainingData:
        from tvrl_bench.datasets.toy import training_batch

        b = training_batch(n, rng, self.difficulty, exclude=excluded)
        return TrainingData(b.videos, b.prompts, b.scenes)

    def signatures(self, items: list) -> frozenset:
        from tvrl_bench.datasets.toy import signatures

        return signatures(items)

    def captions(self, data: TrainingData, noise: CaptionNoise, rng: random.Random) -> tuple[str, ...]:
        return sprite_captions(data, noise, rng)


class SlotWorldData(_WorldData):
    """The slot world (world/slots.py SLOTS). Caption noise acts on every slot apart: each slot's colour word is
    replaced with probability `noise.p` (kind 'colour' only), so a base's errors are independent between slots."""

    dataset = "datasets.toy_slots"

    def __init__(self) -> None:
        from tvrl_bench.world.slots import SLOTS

        self.world = SLOTS
        self.frames, self.height, self.width = SLOTS.frames, SLOTS.height, SLOTS.width

    def vocabulary(self) -> list[str]:
        """Every word of the slot grammar: the sprite colours, the slot names of every grid, 'at', 'the', 'and'."""
        from tvrl_bench.world.palette import SPRITE_COLOURS
        from tvrl_bench.world.slots import SLOT_NAMES, slot_prompt

        words: dict[str, None] = {}
        for slots in SLOT_NAMES.values():
            for colour in SPRITE_COLOURS:
                for word in slot_prompt((colour,) * len(slots), slots).replace(",", " ").split():
                    words.setdefault(word, None)
        return list(words)

    def eval_set(self) -> tuple:
        from tvrl_bench.datasets.toy_slots import slot_prompt_set

        return slot_prompt_set().eval

    def validation(self, n: int, rng: random.Random, exclude: frozenset) -> tuple:
        from tvrl_bench.datasets.toy_slots import slot_item
        from tvrl_bench.world.slots import distinct_colourings

        return tuple(slot_item(c, self.world) for c in distinct_colourings(n, rng, self.world, exclude=exclude))

    def batch(self, n: int, rng: random.Random, excluded: frozenset) -> TrainingData:
        from tvrl_bench.datasets.toy_slots import slot_training_batch

        b = slot_training_batch(n, rng, self.world, exclude=excluded)
        return TrainingData(b.videos, b.prompts, b.scenes)

    def signatures(self, items: list) -> frozenset:
        from tvrl_bench.datasets.toy_slots import slot_signatures

        return slot_signatures(items)

    def captions(self, data: TrainingData, noise: CaptionNoise, rng: random.Random) -> tuple[str, ...]:
        from tvrl_bench.world.slots import misdescribe_slots, slot_prompt

        if not noise.p:
            return data.prompts
        if noise.kind != "colour":
            raise ValueError(f"the slot world's caption noise swaps colours; kind {noise.kind!r} is not one of its")
        return tuple(slot_prompt(misdescribe_slots(s.colours, noise.p, rng, self.world), s.slots) for s in data.scenes)


WORLDS: dict[str, type] = {"sprites": SpriteWorldData, "slots": SlotWorldData}


def pretrain_world(name: str) -> PretrainWorld:
    """The world a recipe names ('sprites' or 'slots')."""
    if name not in WORLDS:
        raise ValueError(f"unknown pretraining world {name!r}; worlds are: {', '.join(WORLDS)}")
    return WORLDS[name]()
