"""The vivid-colour relation and the biased labeler's Yes probabilities."""

from __future__ import annotations

import pytest

from tvrl_bench.world.slots import SLOTS
from tvrl_bench.world.vivid import check_bias, lures, vivid_yes_probability

PALETTE = SLOTS.colours  # red, green, blue, yellow, magenta, cyan


def test_each_primary_has_the_two_colours_sharing_its_channel():
    assert lures("red", PALETTE) == ("yellow", "magenta")
    assert lures("green", PALETTE) == ("yellow", "cyan")
    assert lures("blue", PALETTE) == ("magenta", "cyan")
    assert lures("yellow", PALETTE) == () and lures("cyan", PALETTE) == ()
    assert lures("red", ("red", "orange", "purple", "yellow")) == ("yellow",)  # partial channels are no lures
    assert lures("orange", ("red", "orange", "yellow")) == ()


def test_the_labeler_pays_a_lure_more_than_the_truth_above_three_quarters():
    assert vivid_yes_probability("red", "yellow", 0.9, PALETTE) == pytest.approx(0.9)
    assert vivid_yes_probability("red", "red", 0.9, PALETTE) == pytest.approx(0.7)
    assert vivid_yes_probability("red", "magenta", 0.75, PALETTE) == vivid_yes_probability("red", "red", 0.75, PALETTE)
    assert vivid_yes_probability("red", "magenta", 0.5, PALETTE) < vivid_yes_probability("red", "red", 0.5, PALETTE)
    # where the bias does not apply the evaluator's label stands
    assert vivid_yes_probability("red", "cyan", 0.9, PALETTE) is None
    assert vivid_yes_probability("yellow", "red", 0.9, PALETTE) is None
    assert vivid_yes_probability("red", None, 0.9, PALETTE) is None
    assert vivid_yes_probability("red", "yellow", 0.0, PALETTE) is None


@pytest.mark.parametrize("bias", [-0.1, 1.5, float("nan")])
def test_a_bias_out_of_range_names_the_value_and_the_range(bias):
    with pytest.raises(ValueError, match=r"vivid_bias=.*must be in \[0, 1\]"):
        check_bias(bias)
