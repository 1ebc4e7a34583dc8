"""`Policy.prepare_for_sharding`: the hook training/parallel/sharding.py calls before FSDP shards a policy."""

from __future__ import annotations

import logging

import torch
from torch import nn

from tvrl_bench.policies.base import Policy
from tvrl_bench.policies.toy import ToyPolicy


class PlainPolicy(Policy):
    """A policy that calls its modules already: it keeps the contract's default hook."""

    def __init__(self):
        super().__init__()
        self.transformer = nn.Linear(2, 2)
        self.fast = True

    def latent_shape(self):
        return (1, 1, 1, 2)

    def encode(self, prompts):
        return torch.zeros(len(prompts), 1)

    def velocity(self, x, sigma, cond):
        return self.transformer(x)

    def decode(self, x0):
        return x0


def test_the_toy_policy_turns_its_lean_forward_off(tiny_policy_path, caplog):
    policy = ToyPolicy(tiny_policy_path)
    assert policy.fast
    with caplog.at_level(logging.INFO, logger="tvrl_bench.trial"):
        policy.prepare_for_sharding()
    assert policy.fast is False
    assert "policies.toy.fast is off under FSDP" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tvrl_bench.trial"):
        policy.prepare_for_sharding()  # already off: nothing to say
    assert policy.fast is False and caplog.text == ""


def test_a_policy_without_an_override_is_unchanged():
    policy = PlainPolicy()
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    attributes = dict(vars(policy))
    assert policy.prepare_for_sharding() is None
    assert policy.fast is True and dict(vars(policy)) == attributes
    assert all(torch.equal(before[k], v) for k, v in policy.state_dict().items())
