"""The flow-matching objectives' parts: noise levels, training units (DPO's pairs), the old policy, validation."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.objectives.awm import AdvantageWeightedMatching
from tvrl_bench.objectives.base import MATCHING, TRANSITIONS
from tvrl_bench.objectives.dpo import FlowDPO
from tvrl_bench.objectives.guard import GuardedGRPO
from tvrl_bench.objectives.nft import NegativeAwareFineTuning
from tvrl_bench.objectives.reference import MovingAverageReference, PretrainedReference


def test_levels_are_the_schedules_noise_levels_of_the_steps_in_the_range():
    sigmas = torch.linspace(1.0, 0.0, 11)  # 10 steps
    assert torch.equal(AdvantageWeightedMatching(timestep_range=(0.0, 0.9)).levels(sigmas), sigmas[:9])
    assert torch.equal(AdvantageWeightedMatching(timestep_range=(0.0, 0.2)).levels(sigmas), sigmas[:2])
    assert torch.equal(AdvantageWeightedMatching(timestep_range=(0.5, 1.0)).levels(sigmas), sigmas[5:10])
    with pytest.raises(ValueError, match="holds none"):
        AdvantageWeightedMatching(timestep_range=(0.91, 0.95)).levels(sigmas)


@pytest.mark.parametrize("bad,match", [
    (dict(timesteps=0), "timesteps"), (dict(timestep_range=(0.5, 0.5)), "timestep_range"),
    (dict(clip_range=0.0), "clip_range"), (dict(weighting="t^3"), "weighting"), (dict(kl_beta=-1.0), "kl_beta"),
])
def test_bad_settings_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        AdvantageWeightedMatching(**bad)


def test_dpo_pairs_each_groups_best_and_worst_rollout_and_skips_groups_without_a_preference():
    rows = torch.tensor([4, 5, 6, 7, 8, 9, 10, 11])
    groups = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    advantages = torch.tensor([0.1, 0.9, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # group 1: all equal, no preference
    assert FlowDPO().units(rows, advantages, groups).tolist() == [[5, 6]]
    assert FlowDPO().units(rows, torch.zeros(8), groups).shape == (0, 2)
    assert AdvantageWeightedMatching().units(rows, advantages, groups).tolist() == [[r] for r in rows.tolist()]


def test_each_objective_declares_its_pass_and_its_frozen_copies():
    assert AdvantageWeightedMatching().update == MATCHING and AdvantageWeightedMatching().reference is None
    assert isinstance(AdvantageWeightedMatching(kl_beta=0.1).reference, PretrainedReference)
    assert isinstance(FlowDPO().reference, PretrainedReference) and FlowDPO().pair_size == 2
    assert NegativeAwareFineTuning().old is None
    assert isinstance(NegativeAwareFineTuning(old_decay=0.9).old, MovingAverageReference)
    assert GuardedGRPO().update == TRANSITIONS and GuardedGRPO().needs_old_means
    with pytest.raises(TypeError, match="matching_loss"):
        NegativeAwareFineTuning().loss(None, None, None, None)
    with pytest.raises(ValueError, match="mean shift"):
        GuardedGRPO().loss(torch.zeros(1, 1, 1), torch.zeros(1, 1, 1), torch.zeros(1), None)


def test_nfts_moving_old_policy_averages_the_parameters_after_each_update_and_round_trips():
    p = torch.nn.Parameter(torch.zeros(3))
    objective = NegativeAwareFineTuning(old_decay=0.75)
    objective.old.bind([p])
    with torch.no_grad():
        p.fill_(4.0)
    objective.after_update({})
    with objective.old.context(None):
        assert torch.equal(p.detach(), torch.full((3,), 1.0))  # 0.75 * 0 + 0.25 * 4
    assert torch.equal(p.detach(), torch.full((3,), 4.0))
    saved = objective.state_dict()
    objective.after_update({})
    other = NegativeAwareFineTuning(old_decay=0.75)
    other.old.bind([p])
    other.load_state_dict(saved)
    with other.old.context(None):
        assert torch.equal(p.detach(), torch.full((3,), 1.0))
