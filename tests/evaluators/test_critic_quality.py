"""A critic's quality measures (evaluators/critic_quality.py): 0-1 readings, agreement, ECE, mass inside boxes."""

from __future__ import annotations

import math

import pytest
import torch

from tvrl_bench.evaluators.critic_quality import agreement, expected_calibration_error, mass_inside, yes_probability


def test_yes_probability_reads_each_score_space():
    scores = torch.tensor([0.2, 0.9])
    torch.testing.assert_close(yes_probability(scores.log(), "log_prob"), scores)
    torch.testing.assert_close(yes_probability(scores, "prob"), scores)
    torch.testing.assert_close(yes_probability(torch.tensor([1.3, -0.1]), "score", (0.0, 1.0)), torch.tensor([1.0, 0.0]))
    assert yes_probability(scores, "score") is None
    with pytest.raises(ValueError, match="score space"):
        yes_probability(scores, "logits")


def test_agreement_and_calibration():
    p = torch.tensor([0.9, 0.8, 0.3, 0.6])
    passed = torch.tensor([True, False, False, True])
    assert agreement(p, passed) == 0.75
    # bins: 0.3 (target 0), 0.6 (1), 0.8 (0), 0.9 (1): |0.3-0| + |0.6-1| + |0.8-0| + |0.9-1| over 4
    assert expected_calibration_error(p, passed.float()) == pytest.approx((0.3 + 0.4 + 0.8 + 0.1) / 4)
    assert expected_calibration_error(torch.tensor([0.25, 0.25]), torch.tensor([0.0, 0.5])) == pytest.approx(0.0)
    assert math.isnan(agreement(torch.tensor([]), torch.tensor([], dtype=torch.bool)))


def test_mass_inside_boxes():
    maps = torch.zeros(2, 1, 4, 4)
    maps[0, 0, 0, 0] = 3.0  # inside the top-left 2 x 2 box
    maps[0, 0, 3, 3] = 1.0
    share = mass_inside(maps, [[(0, 0, 2, 2)], [(0, 0, 4, 4)]])
    assert float(share[0]) == pytest.approx(0.75) and math.isnan(float(share[1]))  # the second map has no mass
