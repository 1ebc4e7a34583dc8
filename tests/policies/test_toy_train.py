"""`policies.toy.train` chooses which transformer parameters the optimizer updates; the rest stay frozen."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.policies.toy import ToyPolicy


def test_default_trains_every_used_parameter(tiny_policy_path):
    policy = ToyPolicy(tiny_policy_path)
    names = [n for n, _ in policy.named_trainable_parameters()]
    assert any(n.startswith("transformer_blocks.0") for n in names)
    assert any(n.startswith("proj_out") for n in names)
    # the masked-out ByT5 and image branches are never trained
    assert not any(n.startswith(("context_embedder_2", "image_embedder")) for n in names)
    assert [id(p) for p in policy.trainable_parameters()] == [id(p) for _, p in policy.named_trainable_parameters()]


def test_train_prefixes_select_and_freeze_the_rest(tiny_policy_path):
    policy = ToyPolicy(tiny_policy_path, train=("x_embedder", "transformer_blocks.0"))
    names = [n for n, _ in policy.named_trainable_parameters()]
    assert names and all(n.startswith(("x_embedder", "transformer_blocks.0")) for n in names)
    expected = [n for n, _ in policy.transformer.named_parameters() if n.startswith(("x_embedder", "transformer_blocks.0"))]
    assert names == expected

    x = torch.randn(2, *policy.latent_shape())
    v = policy.velocity(x, torch.tensor([0.9, 0.5]), policy.encode(["a red circle", "a blue square"]))
    v.square().mean().backward()
    for name, p in policy.transformer.named_parameters():
        if name not in names:
            assert p.grad is None, f"{name} is frozen but got a gradient"
    assert policy.transformer.x_embedder.proj.weight.grad.abs().sum() > 0


def test_unknown_prefix_names_the_parameter_and_the_modules(tiny_policy_path):
    with pytest.raises(ValueError, match=r"policies\.toy\.train.*'transformer_block\.0'.*transformer_blocks"):
        ToyPolicy(tiny_policy_path, train=("transformer_block.0",))
