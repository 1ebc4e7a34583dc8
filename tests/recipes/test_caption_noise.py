"""Noisy captions: hand-made scenes, the corruption's rate and reach, and the fine-tuning recipe that uses them."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
import torch

from tvrl_bench.datasets.toy import training_batch
from tvrl_bench.policies.toy import SHIPPED_BASES, ToyPolicy
from tvrl_bench.recipes.caption_noise import CaptionNoise, captions, misdescribe
from tvrl_bench.recipes.pretrain_policy import RECIPES, pretrain_policy
from tvrl_bench.world.grammar import parse_prompt, prompt_of
from tvrl_bench.world.scene import SceneDescription, SpriteDescription

TWO = SceneDescription("black", (SpriteDescription("red", "circle", "left"), SpriteDescription("blue", "square", "static")))


class Scripted(random.Random):
    """A Random whose draws are given: random() returns `uniform`, randrange(n) `index`, choice(seq) seq[`pick`]."""

    def __init__(self, uniform: float, index: int = 0, pick: int = 0):
        super().__init__(0)
        self.uniform, self.index, self.pick = uniform, index, pick

    def random(self) -> float:
        return self.uniform

    def randrange(self, n: int) -> int:
        assert 0 <= self.index < n
        return self.index

    def choice(self, seq):
        return seq[self.pick]


def test_a_draw_at_or_above_p_leaves_the_caption_as_the_world_wrote_it():
    assert misdescribe(TWO, CaptionNoise(p=0.8), Scripted(0.8)) is TWO
    assert misdescribe(TWO, CaptionNoise(p=0.0), Scripted(0.0)) is TWO


def test_a_corrupted_caption_names_another_colour_for_one_sprite_and_keeps_the_rest():
    # Second sprite (blue), replacements in the difficulty's order without blue: red, green, yellow; pick 2 = yellow.
    noisy = misdescribe(TWO, CaptionNoise(p=0.8), Scripted(0.1, index=1, pick=2))
    assert prompt_of(noisy) == "a red circle moving left and a yellow square standing still on a black background"
    assert parse_prompt(prompt_of(noisy)) == noisy  # still a well-formed toy prompt


def test_shape_noise_swaps_the_shape_word_only():
    noisy = misdescribe(TWO, CaptionNoise(p=1.0, kind="shape"), Scripted(0.5, index=0, pick=0))
    assert prompt_of(noisy) == "a red square moving left and a blue square standing still on a black background"


def test_the_corruption_rate_matches_p_and_never_names_the_true_colour():
    rng = random.Random(5)
    batch = training_batch(2000, random.Random(1))
    changed = 0
    for scene in batch.scenes:
        truth = scene.description()
        noisy = misdescribe(truth, CaptionNoise(p=0.8), rng)
        if noisy != truth:
            changed += 1
            diffs = [(a, b) for a, b in zip(truth.sprites, noisy.sprites) if a != b]
            assert len(diffs) == 1
            (a, b), = diffs
            assert (a.shape, a.motion) == (b.shape, b.motion) and a.colour != b.colour
            assert noisy.background == truth.background
    assert abs(changed / 2000 - 0.8) < 0.03  # binomial sd 0.009


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="p=1.5"):
        CaptionNoise(p=1.5)
    with pytest.raises(ValueError, match="kind='motion'"):
        CaptionNoise(p=0.5, kind="motion")


def test_captions_of_a_clean_recipe_are_the_batch_prompts_and_a_seed_fixes_the_noisy_ones():
    batch = training_batch(16, random.Random(2))
    assert captions(batch, RECIPES["v2"].caption_noise, random.Random(0)) is batch.prompts
    noisy = RECIPES["v2_noisy_captions"].caption_noise
    first, again = captions(batch, noisy, random.Random(3)), captions(batch, noisy, random.Random(3))
    assert first == again and first != batch.prompts


def test_the_noisy_captions_recipe_fine_tunes_v2_18k_transformer_only(tmp_path):
    recipe = replace(RECIPES["v2_noisy_captions"], batch=2, val_every=2, n_val=2, n_eval=2, sample_steps=2)
    summary = pretrain_policy(tmp_path, seed=0, steps=2, progress=False, recipe=recipe)
    assert summary["recipe"]["init"] == "v2_18k" and summary["recipe"]["caption_noise"] == {"p": 0.8, "kind": "colour"}
    assert json.loads((tmp_path / "pretrain.json").read_text())["steps"] == 2
    tuned, base = ToyPolicy(str(tmp_path)), ToyPolicy(base="v2_18k")
    for a, b in zip(tuned.text_encoder.parameters(), base.text_encoder.parameters()):
        assert torch.equal(a, b)  # the words keep the base's embeddings
    moved = [not torch.equal(a, b) for a, b in zip(tuned.transformer.parameters(), base.transformer.parameters())]
    assert any(moved)


def test_the_shipped_noisy_captions_base_records_its_recipe():
    written = json.loads((SHIPPED_BASES["v2_noisy_captions"] / "pretrain.json").read_text())
    assert written["recipe"]["init"] == "v2_18k" and written["recipe"]["caption_noise"]["p"] == 0.8
    assert written["steps"] == RECIPES["v2_noisy_captions"].steps
