"""The inversion rate against a hand count of pairs."""

from __future__ import annotations

import math

import pytest
import torch

from tvrl_bench.evaluators.inversions import inversion_rate, pair_counts, pooled_rate


def test_a_hand_counted_group():
    # one group of 4: evaluator targets 1, 1, 0, 0.5; critic scores 0.2, 0.9, 0.5, 0.5
    # ordered pairs (better, worse): (0,2) (0,3) (1,2) (1,3) (3,2) -> 5
    # inverted (worse scored higher): (0,2): 0.5 > 0.2 yes; (0,3): 0.5 > 0.2 yes; (1,2) no; (1,3) no;
    # (3,2): 0.5 > 0.5 tie, not inverted -> 2
    score = torch.tensor([0.2, 0.9, 0.5, 0.5])
    target = torch.tensor([1.0, 1.0, 0.0, 0.5])
    assert pair_counts(score, target, 4) == (2, 5)
    assert inversion_rate(score, target, 4) == pytest.approx(0.4)


def test_pairs_stay_inside_their_group():
    score = torch.tensor([0.9, 0.8, 0.1, 0.0])
    target = torch.tensor([1.0, 0.0, 1.0, 0.0])
    assert pair_counts(score, target, 2) == (0, 2)  # groups (0, 1) and (2, 3): the critic orders both right
    # one group of 4: better {0, 2}, worse {1, 3}; only (2, 1) is inverted (0.8 > 0.1)
    assert pair_counts(score, target, 4) == (1, 4)


def test_matches_a_loop_over_pairs():
    generator = torch.Generator().manual_seed(0)
    score = torch.rand(24, generator=generator).round(decimals=1)  # ties happen
    target = torch.randint(0, 3, (24,), generator=generator).float()
    inverted = ordered = 0
    for start in range(0, 24, 6):
        for i in range(start, start + 6):
            for j in range(start, start + 6):
                if target[i] > target[j]:
                    ordered += 1
                    inverted += int(score[j] > score[i])
    assert pair_counts(score, target, 6) == (inverted, ordered) and ordered > 0 and inverted > 0


def test_keep_and_worse_filters():
    score = torch.tensor([0.3, 0.6, 0.7, 0.1])
    target = torch.tensor([1.0, 0.0, 0.0, 0.0])
    # all pairs: (0,1) inv, (0,2) inv, (0,3) not -> 2 of 3
    assert pair_counts(score, target, 4) == (2, 3)
    # rollout 2 dropped: (0,1) inv, (0,3) not
    assert pair_counts(score, target, 4, keep=torch.tensor([True, True, False, True])) == (1, 2)
    # only pairs whose worse rollout is 2 or 3 (say, it shows a lure)
    assert pair_counts(score, target, 4, worse=torch.tensor([False, False, True, True])) == (1, 2)


def test_no_ordered_pair_is_nan_and_counts_pool():
    assert math.isnan(inversion_rate(torch.tensor([0.1, 0.9]), torch.tensor([1.0, 1.0]), 2))
    assert pooled_rate([(1, 2), (0, 0), (2, 2)]) == pytest.approx(0.75)
    assert math.isnan(pooled_rate([]))


def test_rows_that_do_not_split_into_groups_are_refused():
    with pytest.raises(ValueError, match="groups of 4"):
        pair_counts(torch.zeros(6), torch.zeros(6), 4)
