"""The slot world's answer-likelihood critics (rewards/toy_qwen_slots.py): the qwen_vl critic class on tiny Qwen3.5
checkpoints built by the recipe's builder, and the shipped trained assets."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from tvrl_bench.cli.errors import strip_gin_context
from tvrl_bench.config.errors import ConfigError
from tvrl_bench.evaluators.critic_quality import agreement
from tvrl_bench.recipes.slot_critic_data import fixed_check_set
from tvrl_bench.recipes.slot_qwen_build import answer_model, slot_processor, slot_tokenizer
from tvrl_bench.rewards.toy_qwen_slots import ToyQwenSlots, ToyQwenSlotsShortcut, ToyQwenSlotsVivid, ToyQwenSlotsWeak
from tvrl_bench.rewards.toy_slot_assets import ASSETS
from tests.rewards.tiny_slot_critics import PROMPTS, SMALL, prompt_checks


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    """An untrained tiny checkpoint in the layout the recipe writes."""
    return save_tiny(tmp_path_factory.mktemp("toy_qwen_slots"))


def save_tiny(folder):
    """Write an untrained tiny checkpoint in the layout the recipe writes; return its folder."""
    tokenizer = slot_tokenizer("qwen3_5")
    answer_model(SMALL, tokenizer, seed=0).save_pretrained(folder)
    slot_processor("qwen3_5", tokenizer).save_pretrained(folder)
    return folder


def _critic(folder, **overrides) -> ToyQwenSlots:
    """The critic on `folder` with QwenInputs fields as keyword arguments (float32, CPU)."""
    from tvrl_bench.rewards.qwen.inputs import QwenInputs

    return ToyQwenSlots(path=str(folder), inputs=QwenInputs(**{"dtype": "float32", "device": "cpu", **overrides}))


def test_contract_scores_per_check_differentiable_and_frozen(tiny_folder):
    critic = ToyQwenSlots(path=str(tiny_folder))
    assert critic.worlds == ("slots",) and critic.score_space == "prob" and critic.uses_checks
    assert not any(p.requires_grad for p in critic.parameters()) and not critic.model.training
    video = torch.rand(2, 8, 3, 16, 16, generator=torch.Generator().manual_seed(0)).requires_grad_(True)
    scores = critic.score(video, PROMPTS, prompt_checks())
    assert scores.shape == (2, 4) and bool(((scores > 0) & (scores < 1)).all())
    scores.sum().backward()
    assert video.grad is not None and float(video.grad.abs().sum()) > 0 and bool(torch.isfinite(video.grad).all())
    log_critic = ToyQwenSlots(path=str(tiny_folder), score="log_prob")
    assert log_critic.score_space == "log_prob"
    torch.testing.assert_close(log_critic.score(video.detach(), PROMPTS, prompt_checks()).exp(), scores.detach(),
                               atol=1e-5, rtol=1e-4)


def test_round_trip_through_save_pretrained_keeps_the_model(tiny_folder, tmp_path):
    import transformers

    first = transformers.Qwen3_5ForConditionalGeneration.from_pretrained(tiny_folder).eval()
    first.save_pretrained(tmp_path)
    shutil.copy(tiny_folder / "processor_config.json", tmp_path)
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        shutil.copy(tiny_folder / name, tmp_path)
    again = transformers.Qwen3_5ForConditionalGeneration.from_pretrained(tmp_path).eval()
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), again.state_dict().values()))
    video = torch.rand(2, 8, 3, 16, 16, generator=torch.Generator().manual_seed(1))
    a = ToyQwenSlots(path=str(tiny_folder)).score(video, PROMPTS, prompt_checks())
    b = ToyQwenSlots(path=str(tmp_path)).score(video, PROMPTS, prompt_checks())
    torch.testing.assert_close(a, b)


def test_a_check_of_another_world_is_one_line_naming_the_critic(tiny_folder):
    critic = ToyQwenSlots(path=str(tiny_folder))
    video = torch.rand(1, 8, 3, 16, 16)
    for question in ("Is there a red circle?", "Is the top left object white?", "Is the middle object red?"):
        with pytest.raises(ConfigError) as info:
            critic.score(video, ["a red circle moving right on a black background"], [[question]])
        message = strip_gin_context(str(info.value))[0]  # what the command line prints
        assert "rewards.toy_qwen_slots" in message and "slot world" in message and "\n" not in message


def test_a_missing_or_corrupt_asset_is_one_line_with_the_fix(tiny_folder, tmp_path):
    with pytest.raises(ConfigError) as info:
        ToyQwenSlotsWeak(path=str(tmp_path / "nowhere"))
    assert "rewards.toy_qwen_slots_weak" in str(info.value) and "prepare-toy --what critic --recipe slots" in str(info.value)
    broken = tmp_path / "broken"
    shutil.copytree(tiny_folder, broken)
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ConfigError) as info:
        ToyQwenSlotsShortcut(path=str(broken))
    message = strip_gin_context(str(info.value))[0]
    assert "rewards.toy_qwen_slots_shortcut" in message and "corrupt" in message and "\n" not in message


@pytest.mark.parametrize("cls", [ToyQwenSlots, ToyQwenSlotsWeak, ToyQwenSlotsShortcut, ToyQwenSlotsVivid])
def test_shipped_asset_reaches_its_recorded_accuracy(cls):
    """The shipped weights load, and on the fixed rendered set score what their pretrain.json recorded."""
    record = json.loads((ASSETS / cls.asset / "pretrain.json").read_text())
    assert record["world"] == "slots" and record["critic"] == cls.asset and record["cpu_s"] > 0
    critic = cls()
    videos, asked, _ = fixed_check_set()
    with torch.no_grad():
        p = critic.score_pairs(videos[[q.video for q in asked]], [""] * len(asked), [q.text() for q in asked])
    measured = agreement(p, torch.tensor([bool(q.label) for q in asked]))
    assert measured >= record["measures"]["fixed_set_accuracy"] - 0.02
