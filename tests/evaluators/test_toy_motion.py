"""The motion and coherence diagnostics on hand-made videos: rendered ground truth, a sprite that wanders,
a sprite that moves the wrong way, and a sprite that is missing."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch

from tvrl_bench.datasets.toy import toy_prompt_set
from tvrl_bench.evaluators.toy_motion import motion_report
from tvrl_bench.world.palette import rgb
from tvrl_bench.world.render import ground_truth_videos


def square_video(xs: list[int], ys: list[int], colour: str = "red", background: str = "black", size: int = 5) -> torch.Tensor:
    """video[F, 3, 16, 16]: a `size`-px square of `colour` with its top-left corner at (xs[f], ys[f]) in frame f."""
    video = torch.tensor(rgb(background))[None, :, None, None].repeat(len(xs), 1, 16, 16)
    for f, (x, y) in enumerate(zip(xs, ys)):
        video[f, :, y : y + size, x : x + size] = torch.tensor(rgb(colour))[:, None, None]
    return video


def test_ground_truth_detects_every_asked_motion_and_static_sprites_do_not_move():
    items = toy_prompt_set(n_eval=64, n_train=0).eval
    videos = ground_truth_videos([i.prompt for i in items], random.Random(0))
    report = motion_report(videos, [i.checks for i in items])
    asked = sum(report.confusion.values())
    assert asked == sum(1 for i in items for c in i.checks if c.startswith("Does"))
    assert sum(n for (a, d), n in report.confusion.items() if a == d) == asked
    assert report.asked_is_most_detected()
    assert report.ranges and max(report.ranges) == 0.0 and report.static_within(1.0) == 1.0
    assert len(report.deviations) == asked and max(report.deviations) < 1e-9 and report.on_path_within(1.0) == 1.0


def test_a_wandering_static_sprite_and_a_wrong_direction_are_measured():
    still = square_video([5] * 8, [5] * 8)
    wander = square_video([2, 6, 3, 7, 2, 6, 3, 7], [5, 2, 6, 3, 5, 2, 6, 3])
    backwards = square_video(list(range(8, 0, -1)), [5] * 8)  # asked right, moves left
    gone = torch.zeros_like(still)
    checks = [
        ("Does the red square stand still?",),
        ("Does the red square stand still?",),
        ("Does the red square move to the right?",),
        ("Does the red square move up?",),
    ]
    report = motion_report(torch.stack([still, wander, backwards, gone]), checks)
    # The wanderer's least-squares velocity is near 0, so the evaluator calls it static: only its range shows it.
    assert report.confusion[("static", "static")] == 2
    assert report.confusion[("right", "left")] == 1
    assert report.confusion[("up", "absent")] == 1
    assert report.ranges[0] == 0.0 and report.ranges[1] == 5.0
    assert report.static_within(1.0) == 0.5
    assert report.most_detected("right") == "left"
    assert not report.asked_is_most_detected()
    assert "right |" in report.table() and "0/1" in report.table()
    # Straight paths stray 0 px whichever way they go; the wanderer's distance from its line is fitted
    # independently here, one axis at a time (a 5-px square's centroid is its corner + 2).
    assert report.deviations[0] < 1e-9 and report.deviations[2] < 1e-9 and math.isinf(report.deviations[3])
    t = np.arange(8)
    xs, ys = np.array([2, 6, 3, 7, 2, 6, 3, 7]) + 2.0, np.array([5, 2, 6, 3, 5, 2, 6, 3]) + 2.0
    rx, ry = xs - np.polyval(np.polyfit(t, xs, 1), t), ys - np.polyval(np.polyfit(t, ys, 1), t)
    assert report.deviations[1] == pytest.approx(np.hypot(rx, ry).max()) and report.deviations[1] > 2.0
    assert report.on_path_within(1.0) == 0.5


def test_a_static_sprite_that_glides_steadily_is_on_its_path_but_out_of_range():
    glide = square_video([2, 3, 4, 5, 6, 7, 8, 9], [5] * 8)
    jitter = square_video([5, 6, 5, 6, 5, 6, 5, 6], [5] * 8)
    report = motion_report(torch.stack([glide, jitter]), [("Does the red square stand still?",)] * 2)
    assert report.ranges == [7.0, 1.0]
    assert report.deviations[0] < 1e-9
    # x alternates 7, 8, 7, 8, ...: the least-squares slope is sum((t - 3.5)(x - 7.5)) / sum((t - 3.5)^2) = 2 / 42,
    # so frame 1 (x - 7.5 = +0.5, t - 3.5 = -2.5) is 0.5 + 2.5 / 21 = 13 / 21 px off the line, the farthest.
    assert report.deviations[1] == pytest.approx(13 / 21)


def test_a_sprite_seen_in_one_frame_has_no_range():
    one = square_video([5] + [0] * 7, [5] + [0] * 7, size=5)
    one[1:] = 0
    report = motion_report(one[None], [("Does the red square stand still?",)])
    assert report.confusion[("static", "absent")] == 1 and math.isinf(report.ranges[0])
    assert report.static_within(1.0) == 0.0
