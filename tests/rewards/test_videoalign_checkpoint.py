"""Loading VideoAlign's VideoReward folder: which checkpoint-<step>, the saved PEFT / transformers-4.45 names mapped
to transformers 5 with LoRA pairs scaled for merging, and the qwen-vl-utils rules from model_config.json."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.rewards.qwen.inputs import QwenInputs
from tvrl_bench.rewards.videoalign_checkpoint import _lora_scaling, find_checkpoint, merge_checkpoint_state, video_rules


def test_the_latest_checkpoint_unless_a_step_is_named(tmp_path):
    for name in ("checkpoint-3", "checkpoint-12", "checkpoint-7", "checkpoint-final"):
        (tmp_path / name).mkdir()
    assert find_checkpoint(tmp_path, -1, "rewards.videoalign.path").name == "checkpoint-12"
    assert find_checkpoint(tmp_path, 7, "rewards.videoalign.path").name == "checkpoint-7"
    with pytest.raises(ValueError, match=r"checkpoint_step=5 is not in .*available steps: \[3, 7, 12\]"):
        find_checkpoint(tmp_path, 5, "rewards.videoalign.path")
    with pytest.raises(ValueError, match=r"rewards\.videoalign\.path='.*' holds no checkpoint-<step> folder"):
        find_checkpoint(tmp_path / "checkpoint-final", -1, "rewards.videoalign.path")


def test_saved_names_map_to_transformers_5_and_lora_pairs_are_scaled():
    g = torch.Generator().manual_seed(0)
    a, b, head = torch.randn(2, 4, generator=g), torch.randn(4, 2, generator=g), torch.randn(1, 4, generator=g)
    prefix, q = "base_model.model.", "model.layers.0.self_attn.q_proj"
    state = {
        f"{prefix}visual.blocks.0.attn.qkv.weight": torch.ones(1),
        f"{prefix}{q}.base_layer.weight": torch.ones(2),
        f"{prefix}{q}.lora_A.default.weight": a,
        f"{prefix}{q}.lora_B.default.weight": b,
        f"{prefix}lm_head.weight": torch.ones(3),
        f"{prefix}rm_head.weight": head,
    }
    plain, head_state, lora = merge_checkpoint_state(state, lora_scaling=2.0)
    assert sorted(plain) == ["lm_head.weight", "model.language_model.layers.0.self_attn.q_proj.weight",
                             "model.visual.blocks.0.attn.qkv.weight"]
    assert list(head_state) == ["weight"] and torch.equal(head_state["weight"], head)
    assert list(lora) == ["model.language_model.layers.0.self_attn.q_proj"]
    lora_a, lora_b = lora["model.language_model.layers.0.self_attn.q_proj"]
    torch.testing.assert_close(lora_b @ lora_a, 2.0 * b @ a)
    with pytest.raises(ValueError, match="do not pair up"):
        merge_checkpoint_state({f"{prefix}{q}.lora_A.weight": a}, lora_scaling=1.0)
    assert _lora_scaling({"lora_r": 4, "lora_alpha": 8}) == 2.0
    assert _lora_scaling({"lora_r": 4, "lora_alpha": 8, "use_rslora": True}) == 4.0


def test_video_rules_from_the_data_config_unless_the_shared_settings_say_otherwise():
    config = {"data_config": {"fps": 2.0, "num_frames": None, "max_frame_pixels": 200704}}
    rules = video_rules(config, QwenInputs(), factor=28)
    assert (rules.fps, rules.nframes, rules.count_rounding, rules.total_pixels) == (2.0, None, "round", None)
    assert (rules.min_pixels, rules.max_pixels) == (128 * 28 * 28, 200704)
    by_count = video_rules(config, QwenInputs(frames=8), 28)
    assert (by_count.nframes, by_count.fps) == (8, None)
    assert video_rules(config, QwenInputs(fps=1.0), 28).fps == 1.0
    counted = {"data_config": {"fps": 2.0, "num_frames": 6}}
    assert video_rules(counted, QwenInputs(), 28).nframes == 6 and video_rules(counted, QwenInputs(fps=1.0), 28).fps == 1.0
    budget = video_rules(config, QwenInputs(min_pixels=784, max_pixels=1568), 28)
    assert (budget.min_pixels, budget.max_pixels) == (784, 1568)
