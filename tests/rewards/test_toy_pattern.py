"""`rewards.toy_pattern`, the hacking control: the mean brightness of the top-left corner patch, whatever the prompt."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.rewards.toy_pattern import ToyPattern


def test_scores_the_corner_patch_and_nothing_else():
    video = torch.zeros(2, 3, 3, 16, 16)
    video[0, :, :, :4, :4] = 0.5  # the 4 x 4 corner (a quarter of 16) half bright
    video[1, :, :, 4:, 4:] = 1.0  # everything but the corner bright
    critic = ToyPattern()
    scores = critic.score(video, ["a red circle", "a blue square"], [["Is there a red circle?", "Is it red?"],
                                                                     ["Is there a blue square?"]])
    assert scores.tolist() == [[0.5, 0.5], [0.0, 0.0]]  # every check of a video scores the same; 0 beyond its checks
    assert ToyPattern(fraction=0.5).score(video[1:], ["p"], [["q"]]).item() == pytest.approx(0.25)  # 8 x 8: 16 of 64 lit


def test_its_gradient_is_the_corner_patch():
    video = torch.rand(1, 2, 3, 8, 8, requires_grad=True)
    ToyPattern().score(video, ["p"], [["q"]]).sum().backward()
    grad = video.grad[0]
    assert torch.all(grad[:, :, :2, :2] > 0) and grad[:, :, 2:, :].abs().sum() == 0 and grad[:, :, :, 2:].abs().sum() == 0


def test_a_bad_fraction_is_an_error():
    with pytest.raises(ValueError, match="fraction"):
        ToyPattern(fraction=0.0)
