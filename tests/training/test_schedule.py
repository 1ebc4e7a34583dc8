"""Noise levels with the timestep shift, and the rules selecting which transitions are trained."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tvrl_bench.training.schedule import Schedule


def test_shifted_sigmas_follow_the_flow_matching_shift():
    for shift in (1.0, 3.0, 5.0):
        t = np.linspace(1, 0, 9)
        expected = shift * t / (1 + (shift - 1) * t)
        np.testing.assert_allclose(Schedule(num_steps=8, shift=shift).sigmas().numpy(), expected, atol=1e-7)


def test_all_but_last_step_are_trained_by_default():
    schedule = Schedule(num_steps=5)
    assert schedule.stochastic_steps() == [0, 1, 2, 3]
    assert schedule.trained_steps(2).tolist() == [[0, 1, 2, 3], [0, 1, 2, 3]]


def test_sde_window_makes_only_the_window_stochastic():
    schedule = Schedule(num_steps=8, sde_window=(2, 3))
    assert schedule.stochastic_steps() == [2, 3, 4]
    assert schedule.trained_steps(1).tolist() == [[2, 3, 4]]


def test_fraction_trains_the_first_steps():
    schedule = Schedule(num_steps=9, train_fraction=0.5)
    assert schedule.num_trained == 4
    assert schedule.trained_steps(1).tolist() == [[0, 1, 2, 3]]


def test_shuffle_gives_each_sample_its_own_random_subset():
    schedule = Schedule(num_steps=11, train_fraction=0.3, shuffle=True)
    steps = schedule.trained_steps(6, torch.Generator().manual_seed(0))
    assert steps.shape == (6, 3)
    for row in steps.tolist():
        assert len(set(row)) == 3 and all(0 <= s < 10 for s in row)
    assert len({tuple(r) for r in steps.tolist()}) > 1
    again = schedule.trained_steps(6, torch.Generator().manual_seed(0))
    assert torch.equal(steps, again)


@pytest.mark.parametrize("kwargs", [{"num_steps": 1}, {"train_fraction": 0.0}, {"train_fraction": 1.5}])
def test_bad_schedules_name_the_parameter(kwargs):
    with pytest.raises(ValueError, match="training.schedule"):
        Schedule(**kwargs)


def test_a_malformed_noise_block_names_the_parameter():
    with pytest.raises(ValueError, match="training.schedule.noise_block"):
        Schedule(num_steps=4, noise_block=(2, 2))
