"""Noise levels with the timestep shift, and the rules selecting which transitions are trained."""

from __future__ import annotations

import signal

import numpy as np
import pytest
import torch

from tests.training.test_loop import parameters_equal, trainer
from tvrl_bench.training.loop import Hooks, StopRequested
from tvrl_bench.training.schedule import Schedule
from tvrl_bench.training.step import rollout as rollout_module
from tvrl_bench.training.checkpoint import CheckpointDir


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


# -- the moving SDE window (MixGRPO's sliding window) ----------------------------------------------------------------


def test_the_moving_window_moves_by_its_stride_every_n_updates_and_stays_at_the_end():
    # 8 steps, window of 2 from step 1: its last position starts at 8 - 1 - 2 = 5 (steps 5, 6; step 7 stays ODE)
    schedule = Schedule(num_steps=8, sde_window=(1, 2), window_shift_every=3, window_stride=2)
    starts = [schedule.window_start(u) for u in range(14)]
    assert starts == [1, 1, 1, 3, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5]
    assert schedule.stochastic_steps(4) == [3, 4] and schedule.stochastic_steps(100) == [5, 6]
    # a stride that overshoots the end is clipped to the last position: 0, 0, 2, 2, then 3 (not 4) for good
    clipped = Schedule(num_steps=6, sde_window=(0, 2), window_shift_every=2, window_stride=2)
    assert [clipped.window_start(u) for u in range(8)] == [0, 0, 2, 2, 3, 3, 3, 3]


def test_a_restarting_window_starts_again_from_its_first_position():
    schedule = Schedule(num_steps=8, sde_window=(1, 2), window_shift_every=3, window_stride=2, window_restart=True)
    assert [schedule.window_start(u) for u in range(13)] == [1, 1, 1, 3, 3, 3, 5, 5, 5, 1, 1, 1, 3]
    # positions on the stride's grid only: 0, 2, then back to 0 (position 3 would be off the grid)
    grid = Schedule(num_steps=6, sde_window=(0, 2), window_shift_every=2, window_stride=2, window_restart=True)
    assert [grid.window_start(u) for u in range(8)] == [0, 0, 2, 2, 0, 0, 2, 2]


def test_steps_outside_the_window_are_neither_stochastic_nor_trained():
    schedule = Schedule(num_steps=6, sde_window=(0, 2), window_shift_every=1, train_fraction=0.5)
    for updates, window in [(0, [0, 1]), (1, [1, 2]), (2, [2, 3]), (3, [3, 4]), (9, [3, 4])]:
        assert schedule.stochastic_steps(updates) == window
        assert schedule.trained_steps(3, updates=updates).tolist() == [window[:1]] * 3
    shuffled = Schedule(num_steps=6, sde_window=(0, 2), window_shift_every=1, shuffle=True)
    steps = shuffled.trained_steps(8, torch.Generator().manual_seed(0), updates=2)
    assert all(sorted(row) == [2, 3] for row in steps.tolist())
    assert schedule.reachable_steps() == [0, 1, 2, 3, 4]  # what balancing and validation look at
    sparse = Schedule(num_steps=8, sde_window=(0, 1), window_shift_every=4, window_stride=3, window_restart=True)
    assert sparse.reachable_steps() == [0, 3, 6]


def test_without_a_shift_the_window_is_the_fixed_one_at_every_update():
    fixed = Schedule(num_steps=8, sde_window=(2, 3))
    assert fixed.window_start(10**6) == 2 and fixed.stochastic_steps(10**6) == [2, 3, 4]
    assert fixed.reachable_steps() == fixed.stochastic_steps()
    assert Schedule(num_steps=5).stochastic_steps(7) == [0, 1, 2, 3] and Schedule(num_steps=5).window_start(7) is None


class ContinuingWindow:
    """MixGRPO's window as a running state (fastvideo/utils/grpo_states.py, 'progressive' with overlap): a counter
    of updates in the current position, advanced once per update; the reference a resumed trial must match."""

    def __init__(self, start: int, last: int, every: int, stride: int, restart: bool):
        self.start, self.last, self.every, self.stride, self.restart = start, last, every, stride, restart
        self.position, self.in_position = start, 0

    def update(self) -> None:
        self.in_position += 1
        if self.in_position == self.every:
            self.in_position = 0
            self.position += self.stride
        if self.position > self.last:
            self.position = self.start if self.restart else self.last


@pytest.mark.parametrize("every,stride,restart", [(1, 1, False), (3, 2, False), (2, 1, True), (3, 2, True), (1, 4, True)])
def test_the_window_of_a_resumed_trial_is_the_window_of_one_that_went_straight_through(every, stride, restart):
    kwargs = dict(num_steps=10, sde_window=(1, 2), window_shift_every=every, window_stride=stride, window_restart=restart)
    running = ContinuingWindow(1, 10 - 1 - 2, every, stride, restart)
    for updates in range(60):
        assert Schedule(**kwargs).window_start(updates) == running.position, updates  # built afresh at each update
        running.update()


@pytest.mark.parametrize("kwargs,parameter", [
    ({"sde_window": (0, 2), "window_shift_every": -1}, "window_shift_every"),
    ({"sde_window": (0, 2), "window_shift_every": 1.5}, "window_shift_every"),
    ({"sde_window": (0, 2), "window_shift_every": 1, "window_stride": 0}, "window_stride"),
    ({"window_shift_every": 4}, "window_shift_every"),  # a moving window needs a window
])
def test_a_bad_moving_window_names_the_parameter(kwargs, parameter):
    with pytest.raises(ValueError, match=f"training.schedule.{parameter} = "):
        Schedule(num_steps=6, **kwargs)


# 5 denoising steps, a window of 2 from step 0 moving one step every update: steps 0-1, 1-2, 2-3 (3 = 5 - 2, its end)
MOVING = ("training.schedule.num_steps = 5", "training.schedule.sde_window = (0, 2)",
          "training.schedule.window_shift_every = 1", "training.trial.steps = 3", "training.trial.sample_videos = 0")


def test_a_toy_trial_trains_the_window_where_the_updates_put_it_and_resumes_with_it(tiny_policy_path, tmp_path,
                                                                                    monkeypatch):
    seen: list = []
    sample = rollout_module.sample_rollouts

    def recording_sample(*args, **kwargs):
        rollout = sample(*args, **kwargs)
        seen.append((rollout.trained.tolist(), sorted(rollout.graphs), rollout.log_probs.abs().sum(dim=(0, 2)) > 0))
        return rollout

    monkeypatch.setattr(rollout_module, "sample_rollouts", recording_sample)  # roll_out samples through it
    starts: list = []
    straight = trainer(tiny_policy_path, tmp_path / "straight", *MOVING,
                       hooks=Hooks(on_step=lambda step, out: starts.append(out.metrics["train/sde_window_start"])))
    straight.run(0)
    assert starts == [0.0, 1.0, 2.0]
    for (trained, kept, stochastic), window in zip(seen, ([0, 1], [1, 2], [2, 3])):
        assert trained == [window] * 4 and kept == window  # every rollout trains the window (with its graph)
        assert stochastic.tolist() == [s in window for s in range(5)]  # ODE steps outside it carry no log-prob

    def stop_after_first(step, out):
        first._request_stop(signal.SIGTERM, None)

    first = trainer(tiny_policy_path, tmp_path / "resumed", *MOVING, hooks=Hooks(on_step=stop_after_first))
    with pytest.raises(StopRequested):
        first.run(0)
    seen.clear()
    second = trainer(tiny_policy_path, tmp_path / "resumed", *MOVING)
    second.run(second.load_state(CheckpointDir(tmp_path / "resumed").load()))
    assert [trained[0] for trained, _, _ in seen] == [[1, 2], [2, 3]]  # the checkpoint holds no window: updates do
    assert parameters_equal(second.state(), straight.state())


def test_the_window_counts_optimizer_updates_not_steps(tiny_policy_path, tmp_path):
    # 2 minibatches: every step makes 2 updates, so step 1 starts after 2 and step 2 after 4 (window at 2 // 2, 4 // 2)
    t = trainer(tiny_policy_path, tmp_path, *MOVING, "training.schedule.window_shift_every = 2",
                "training.trial.minibatches = 2")
    for step, start in ((1, 1), (2, 2)):
        batch = t.collect(step)
        assert batch.updates == 2 * step and batch.rollout.trained[0].tolist() == [start, start + 1]
