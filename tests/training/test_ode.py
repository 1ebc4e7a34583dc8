"""Deterministic sampling (tvrl_bench/training/ode.py): the micro-batches, and evaluation videos in [0, 1]."""

from __future__ import annotations

import torch

from tvrl_bench.policies.toy import ToyPolicy
from tvrl_bench.samplers.ode import OdeSampler
from tvrl_bench.training.ode import chunks, generate
from tvrl_bench.training.schedule import Schedule

PROMPTS = ["a red circle moving right on a black background", "a blue square standing still on a white background"]


def test_chunks_cover_the_batch_in_order():
    assert chunks(5, 2) == [slice(0, 2), slice(2, 4), slice(4, 5)] and chunks(0, 3) == []


def test_generate_is_deterministic_and_in_range(tiny_policy_path):
    policy = ToyPolicy(tiny_policy_path)
    schedule = Schedule(num_steps=3)
    videos = generate(policy, OdeSampler(), schedule, PROMPTS, torch.Generator().manual_seed(1), micro_batch=2)
    assert videos.shape == (2, 8, 3, 16, 16) and videos.min() >= 0 and videos.max() <= 1
    again = generate(policy, OdeSampler(), schedule, PROMPTS, torch.Generator().manual_seed(1), micro_batch=1)
    assert torch.allclose(videos, again, atol=1e-5)  # another micro-batch split, the same samples
