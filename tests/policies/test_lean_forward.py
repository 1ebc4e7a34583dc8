"""The lean forward (lean_forward.py) computes what diffusers' forward computes, values and gradients, to float
rounding: the toy policy with `fast` on and off."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.policies.lean_forward import lean_forward_applies
from tvrl_bench.policies.toy import ToyPolicy

# Prompts of different lengths (padding within the batch) and CFG's one-token null prompt.
PROMPTS = [
    "a red circle moving right on a black background",
    "a blue square standing still on a white background",
    "a green circle moving up and a red square moving left on a gray background",
]


def inputs(policy: ToyPolicy, batch: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, *policy.latent_shape(), generator=g), torch.rand(batch, generator=g)


def velocity_and_grads(policy: ToyPolicy, fast: bool, prompts: list[str], x: torch.Tensor, sigma: torch.Tensor):
    """v[B, 3, F, H, W] and the gradient of a fixed function of v for every trainable parameter."""
    policy.fast = fast
    policy.zero_grad(set_to_none=True)
    v = policy.velocity(x, sigma, policy.encode(prompts))
    (v * torch.linspace(-1, 1, v.numel()).reshape(v.shape)).sum().backward()
    grads = {n: p.grad.clone() for n, p in policy.named_parameters() if p.grad is not None}
    return v.detach(), grads


@pytest.mark.parametrize("guidance", [3.0, 1.0])
def test_lean_forward_equals_diffusers_forward_with_gradients(tiny_policy_path, guidance):
    policy = ToyPolicy(tiny_policy_path, guidance=guidance)
    assert lean_forward_applies(policy.transformer)
    x, sigma = inputs(policy, 3)
    v_ref, g_ref = velocity_and_grads(policy, False, PROMPTS, x, sigma)
    v_fast, g_fast = velocity_and_grads(policy, True, PROMPTS, x, sigma)
    torch.testing.assert_close(v_fast, v_ref, rtol=1e-5, atol=1e-5)
    assert g_fast.keys() == g_ref.keys() and len(g_ref) > 10
    largest = max(float(g.abs().max()) for g in g_ref.values())
    for name in g_ref:
        # Some gradients are zero in exact arithmetic (a key bias shifts every score of a query equally), so
        # each is compared relative to its own size, but never below a millionth of the largest gradient.
        scale = max(float(g_ref[name].abs().max()), 1e-6 * largest)
        torch.testing.assert_close(g_fast[name] / scale, g_ref[name] / scale, rtol=0, atol=1e-4, msg=name)


def test_lean_forward_without_padding_matches_too(tiny_policy_path):
    """Equal-length prompts without CFG: no mask at all on the lean path."""
    policy = ToyPolicy(tiny_policy_path, guidance=1.0)
    x, sigma = inputs(policy, 2, seed=1)
    prompts = [PROMPTS[0], PROMPTS[0].replace("red", "blue")]
    with torch.no_grad():
        policy.fast = False
        ref = policy.velocity(x, sigma, policy.encode(prompts))
        policy.fast = True
        fast = policy.velocity(x, sigma, policy.encode(prompts))
    torch.testing.assert_close(fast, ref, rtol=1e-5, atol=1e-5)


def test_shipped_policy_lean_forward_matches_and_the_state_dict_is_untouched():
    policy = ToyPolicy()
    keys = set(policy.transformer.state_dict())
    x, sigma = inputs(policy, 2, seed=2)
    with torch.no_grad():
        policy.fast = False
        ref = policy.velocity(x, sigma, policy.encode(PROMPTS[:2]))
        policy.fast = True
        fast = policy.velocity(x, sigma, policy.encode(PROMPTS[:2]))
    torch.testing.assert_close(fast, ref, rtol=1e-5, atol=1e-4)
    assert set(policy.transformer.state_dict()) == keys
    assert type(policy.transformer).__name__ == "HunyuanVideo15Transformer3DModel"


def test_lean_forward_steps_aside_where_it_would_differ(tiny_policy_path):
    policy = ToyPolicy(tiny_policy_path)
    policy.transformer.enable_gradient_checkpointing()
    assert not lean_forward_applies(policy.transformer)
