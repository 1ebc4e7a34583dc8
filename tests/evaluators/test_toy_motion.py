"""The motion and coherence diagnostics on hand-made videos: rendered ground truth, a sprite that wanders,
a sprite that moves the wrong way, and a sprite that is missing."""

from __future__ import annotations

import math
import random

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


def test_a_sprite_seen_in_one_frame_has_no_range():
    one = square_video([5] + [0] * 7, [5] + [0] * 7, size=5)
    one[1:] = 0
    report = motion_report(one[None], [("Does the red square stand still?",)])
    assert report.confusion[("static", "absent")] == 1 and math.isinf(report.ranges[0])
    assert report.static_within(1.0) == 0.0
