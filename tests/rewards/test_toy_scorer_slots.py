"""The slot world's scalar scorer (rewards/toy_scorer_slots.py): VideoAlign's class on a tiny Qwen2-VL in
VideoReward's folder layout, and the shipped trained asset."""

from __future__ import annotations

import json
import random
import shutil

import pytest
import torch

from tvrl_bench.cli.errors import strip_gin_context
from tvrl_bench.config.errors import ConfigError
from tvrl_bench.recipes.pretrain_slot_scorer import misprompted, overall, write_layout
from tvrl_bench.recipes.slot_critic_data import fixed_check_set, verdict_table
from tvrl_bench.recipes.slot_qwen_build import chat_template, scorer_model, slot_processor, slot_tokenizer
from tvrl_bench.rewards.toy_scorer_slots import SCORE, ToyScorerSlots
from tvrl_bench.rewards.toy_slot_assets import ASSETS
from tvrl_bench.rewards.videoalign_prompt import SPECIAL_TOKENS
from tests.rewards.tiny_slot_critics import PROMPTS, SMALL


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    """An untrained tiny scorer in the layout the recipe writes."""
    return save_tiny(tmp_path_factory.mktemp("toy_scorer_slots"))


def save_tiny(folder):
    """Write an untrained tiny scorer in the layout the recipe writes; return its folder."""
    tokenizer = slot_tokenizer("qwen2_vl")
    tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS)})
    tokenizer.chat_template = chat_template("qwen2_vl", "before_rewards")
    scorer_model(SMALL, tokenizer, seed=0).save_pretrained(folder / "base")
    slot_processor("qwen2_vl", tokenizer, "before_rewards").save_pretrained(folder / "base")
    write_layout(folder, torch.randn(1, SMALL.hidden, generator=torch.Generator().manual_seed(0)), tokenizer, 5)
    return folder


def _critic(folder, **overrides) -> ToyScorerSlots:
    """The scorer on `folder` with QwenInputs fields as keyword arguments (float32, CPU, 16 x 16 frames kept)."""
    from tvrl_bench.rewards.qwen.inputs import QwenInputs

    return ToyScorerSlots(path=str(folder), inputs=QwenInputs(**{"dtype": "float32", "device": "cpu",
                                                                 "min_pixels": 64, **overrides}))


def test_contract_one_score_per_video_in_0_1_differentiable_and_frozen(tiny_folder):
    critic = ToyScorerSlots(path=str(tiny_folder))
    assert critic.worlds == ("slots",) and not critic.uses_checks and critic.score_names == (SCORE,)
    assert critic.score_space == "score" and critic.score_range == (0.0, 1.0)
    assert not any(p.requires_grad for p in critic.parameters())
    video = torch.rand(2, 8, 3, 16, 16, generator=torch.Generator().manual_seed(0)).requires_grad_(True)
    scores = critic.score(video, PROMPTS, [("ignored",)] * 2)
    assert scores.shape == (2, 1) and bool(((scores > 0) & (scores < 1)).all())
    scores.sum().backward()
    assert float(video.grad.abs().sum()) > 0 and bool(torch.isfinite(video.grad).all())


def test_round_trip_through_the_folder_layout_keeps_the_scores(tiny_folder, tmp_path):
    import transformers

    copy = tmp_path / "copy"
    shutil.copytree(tiny_folder, copy)
    model = transformers.Qwen2VLForConditionalGeneration.from_pretrained(tiny_folder / "base").eval()
    model.save_pretrained(copy / "base")
    video = torch.rand(2, 8, 3, 16, 16, generator=torch.Generator().manual_seed(2))
    a = ToyScorerSlots(path=str(tiny_folder)).score(video, PROMPTS, [()] * 2)
    b = ToyScorerSlots(path=str(copy)).score(video, PROMPTS, [()] * 2)
    torch.testing.assert_close(a, b)


def test_another_world_missing_or_corrupt_asset_is_one_line(tiny_folder, tmp_path):
    critic = ToyScorerSlots(path=str(tiny_folder))
    with pytest.raises(ConfigError) as info:
        critic.score(torch.rand(1, 8, 3, 16, 16), ["a red circle moving right on a black background"], [()])
    message = strip_gin_context(str(info.value))[0]
    assert "rewards.toy_scorer_slots" in message and "slot world" in message
    with pytest.raises(ConfigError) as info:
        ToyScorerSlots(path=str(tmp_path / "nowhere"))
    assert "prepare-toy --what critic --recipe slots --critic toy_scorer_slots" in str(info.value)
    broken = tmp_path / "broken"
    shutil.copytree(tiny_folder, broken)
    (broken / "model_config.json").write_text("{not json")
    with pytest.raises(ConfigError) as info:
        ToyScorerSlots(path=str(broken))
    assert "corrupt" in strip_gin_context(str(info.value))[0]


@pytest.mark.parametrize("prompt", [
    "orange at the top left, blue at the top right, green at the bottom left and cyan at the bottom right",
    "red at the top left, blue at the top right, green at the bottom left and purple at the bottom right",
    "red at the left and blue at the right",
])
def test_a_colour_or_grid_it_never_saw_is_refused_as_the_answer_critics_refuse_it(tiny_folder, prompt):
    critic = ToyScorerSlots(path=str(tiny_folder))
    with pytest.raises(ConfigError) as info:
        critic.score(torch.rand(1, 8, 3, 16, 16), [prompt], [()])
    message = strip_gin_context(str(info.value))[0]
    assert len(message.splitlines()) == 1 and "rewards.toy_scorer_slots" in message and repr(prompt) in message
    assert "colours red, green, blue, yellow, magenta, cyan" in message


def test_overall_and_misprompted_prompts_follow_the_evaluator():
    videos, _, prompts = fixed_check_set(n=8)
    table = verdict_table(videos)
    assert overall(table, prompts).tolist() == [1.0] * 8  # rendered ground truth passes every check
    wrong = misprompted(table, random.Random(0))
    shares = overall(table, wrong)
    assert all(float(s) * 4 == round(float(s) * 4) for s in shares) and float(shares.min()) < 1.0


def test_shipped_asset_reaches_its_recorded_error():
    record = json.loads((ASSETS / "toy_scorer_slots" / "pretrain.json").read_text())
    assert record["world"] == "slots" and record["cpu_s"] > 0
    critic = ToyScorerSlots()
    videos, _, _ = fixed_check_set()
    table = verdict_table(videos)
    prompts = misprompted(table, random.Random(12_345))
    with torch.no_grad():
        score = critic.score_pairs(videos, prompts, [SCORE] * len(prompts))
    assert float((score - overall(table, prompts)).abs().mean()) <= record["measures"]["fixed_set_mae"] + 0.02
