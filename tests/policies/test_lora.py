"""Trainable parameters of the HunyuanVideo-1.5 transformer: LoRA adapters on named projections, or every weight."""

from __future__ import annotations

import pytest
from torch import nn

from tvrl_bench.policies.lora import named_trainable, trainable_transformer


def frozen_block() -> nn.Module:
    """A stand-in transformer with attention projection names (to_q, to_out.0) and another layer, all frozen."""
    block = nn.Module()
    block.attn = nn.Module()
    block.attn.to_q = nn.Linear(4, 4)
    block.attn.to_out = nn.ModuleList([nn.Linear(4, 4)])
    block.proj = nn.Linear(4, 4)
    return block.requires_grad_(False)


def test_lora_trains_only_adapters_on_the_targets():
    model = trainable_transformer(frozen_block(), 2, 4.0, ("to_q", "to_out.0"), 0.0)
    names = [n for n, _ in named_trainable(model, full_finetune=False)]
    assert names and all("lora_" in n for n in names)
    assert any("to_q.lora_A" in n for n in names) and any("to_out.0.lora_B" in n for n in names)
    assert not any("proj" in n for n in names)
    assert names == [n for n, p in model.named_parameters() if p.requires_grad]


def test_rank_zero_trains_every_weight():
    base = frozen_block()
    model = trainable_transformer(base, 0, 4.0, ("to_q",), 0.0)
    assert model is base and all(p.requires_grad for p in model.parameters())
    assert [n for n, _ in named_trainable(model, full_finetune=True)] == [n for n, _ in base.named_parameters()]


def test_unknown_target_names_the_setting():
    with pytest.raises(ValueError, match=r"lora_targets: \['qkv'\]"):
        trainable_transformer(frozen_block(), 2, 4.0, ("qkv",), 0.0)
