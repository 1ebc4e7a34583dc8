"""Group-relative advantages against a per-group computation done here with numpy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tvrl_bench.objectives import group_advantages


def test_group_std_advantages_match_numpy():
    rewards = np.array([1.0, 2.0, 4.0, 0.5, 0.5, 3.0, -1.0, 2.0])
    groups = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    expected = np.empty_like(rewards)
    for g in np.unique(groups):
        r = rewards[groups == g]
        expected[groups == g] = (r - r.mean()) / (r.std() + 1e-4)
    out = group_advantages(torch.tensor(rewards), torch.tensor(groups), clip=None)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5)


def test_global_std_and_clipping():
    rewards = torch.tensor([0.0, 10.0, 0.0, 0.0])
    groups = torch.tensor([0, 0, 1, 1])
    out = group_advantages(rewards, groups, std_mode="global", clip=1.0)
    centred = np.array([-5.0, 5.0, 0.0, 0.0])
    expected = np.clip(centred / (np.std([0, 10, 0, 0]) + 1e-4), -1, 1)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_identical_rewards_give_zero_advantage():
    out = group_advantages(torch.ones(4), torch.tensor([3, 3, 7, 7]))
    assert torch.equal(out, torch.zeros(4))


def test_unknown_std_mode_is_rejected():
    with pytest.raises(ValueError, match="std_mode"):
        group_advantages(torch.ones(2), torch.zeros(2, dtype=torch.long), std_mode="batch")
