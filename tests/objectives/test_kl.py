"""The official KL pieces: the adaptive coefficient's trajectory, stepwise KL, reference refresh schedule."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.objectives.kl import AdaptiveKLCoefficient, RefreshSchedule, combined_kl, stepwise_kl


def test_adaptive_coefficient_ramps_then_steps_by_ten_percent():
    c = AdaptiveKLCoefficient(min_coef=1e-7, target=1e-5, max_coef=1e-4, ramp_steps=100, window=10)
    coefs = [c.update(0.0) for _ in range(99)]
    expected = [1e-7 + (1e-5 - 1e-7) * n / 100 for n in range(1, 100)]
    assert coefs == pytest.approx(expected, rel=1e-12)
    # step 100 onwards: mean KL of the last 10 updates decides; KL 0 < 0.5 target -> x1.1 each update
    coef = coefs[-1]
    for _ in range(3):
        coef = coef * 1.1
        assert c.update(0.0) == pytest.approx(coef, rel=1e-12)
    for _ in range(10):  # a large KL fills the window: mean > 1.5 target only once enough large values arrive
        c.update(1.0)
    before = c.coef
    assert c.update(1.0) == pytest.approx(before * 0.9, rel=1e-12)
    c.history = [1e-5] * 10  # on target: unchanged
    assert c.update(1e-5) == pytest.approx(before * 0.9, rel=1e-12)
    clone = AdaptiveKLCoefficient(min_coef=1e-7, target=1e-5, max_coef=1e-4)
    clone.load_state_dict(c.state_dict())
    assert clone.update(0.0) == c.update(0.0)


def test_stepwise_and_combined_kl_and_refresh():
    old, new = torch.tensor([[0.0, -1.0], [2.0, 2.0]]), torch.tensor([[-1.0, -1.0], [1.0, 0.0]])
    torch.testing.assert_close(stepwise_kl(old, new), torch.tensor([0.5, 1.5]))
    torch.testing.assert_close(combined_kl(torch.tensor([2.0]), torch.tensor([1.0])), torch.tensor([2.1]))
    assert [RefreshSchedule(10).due(n) for n in (0, 5, 10, 20, 21)] == [False, False, True, True, False]
