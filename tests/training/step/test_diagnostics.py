"""Per-step diagnostics on hand-made rewards and scores."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import torch

from tvrl_bench.training.step.diagnostics import floor_fraction, group_spread, reward_per_kind
from tvrl_bench.world.checks import check_kind, check_row


def test_group_spread_counts_groups_without_reward_spread():
    rewards = torch.tensor([1.0, 1.0, 0.0, 2.0, -1.0, -1.0])
    groups = torch.tensor([0, 0, 1, 1, 2, 2])
    out = group_spread(rewards, groups)
    assert out["train/zero_std_groups"] == pytest.approx(2 / 3)
    assert out["train/group_reward_std"] == pytest.approx((0 + 1 + 0) / 3)


def test_floor_fraction_counts_masked_scores_at_the_floor():
    floor = math.log(1e-4)
    scores = torch.tensor([[floor, -1.0, floor], [-0.1, floor + 1e-5, 0.0]])
    mask = torch.tensor([[True, True, False], [True, True, True]])
    assert floor_fraction(scores, mask, floor) == pytest.approx(2 / 5)


def test_reward_per_kind_averages_each_kind_and_skips_free_text():
    checks = [["Is there a red circle?", "Is the background black?"], ["Is there a red object?", "Is the scene pleasant?"]]
    scores = torch.tensor([[-2.0, -0.5], [-1.0, -7.0]])
    assert check_kind("Is the scene pleasant?") is None
    assert reward_per_kind(scores, checks) == {
        "train/reward/background": -0.5, "train/reward/colour": -1.0, "train/reward/object": -2.0,
    }


def test_the_slot_world_logs_one_reward_row_per_slot():
    """Every slot check is of kind `slot`: one row for them all would be the mean reward again, so each slot has its
    own, `train/reward/slot:<name>`."""
    checks = [["Is the top left object red?", "Is the bottom right object blue?"],
              ["Is the top left object green?", "Is the bottom right object blue?"]]
    scores = torch.tensor([[0.9, 0.2], [0.5, 0.4]])
    assert check_row("Is the top left object red?") == "slot:top left" and check_row("Is there a red object?") == "colour"
    assert reward_per_kind(scores, checks) == pytest.approx({"train/reward/slot:bottom right": 0.3,
                                                             "train/reward/slot:top left": 0.7})


def test_every_reward_row_is_named_in_the_tracking_docs():
    """docs/tracking.md lists what a trial run holds: each row the diagnostics log is there by its pattern."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "tracking.md").read_text(encoding="utf-8")
    rows = reward_per_kind(torch.zeros(1, 2), [["Is there a red circle?", "Is the left object red?"]])
    patterns = {re.sub(r"^train/reward/(slot:).*$", r"train/reward/\1<name>",
                       re.sub(r"^train/reward/(?!slot:).*$", "train/reward/<check kind>", key)) for key in rows}
    assert patterns == {"train/reward/<check kind>", "train/reward/slot:<name>"}
    for pattern in patterns:
        assert f"`{pattern}`" in " ".join(text.split()), pattern
