"""The null control: advantages permuted exactly across the step's rollouts, nothing else changed."""

from __future__ import annotations

import gin
import pytest
import torch

from tvrl_bench import registry
from tvrl_bench.config import PROJECT_ROOT
from tvrl_bench.credit.weights import CreditWeights
from tvrl_bench.objectives.grpo import CreditWeightedGRPO, NullControl
from tvrl_bench.objectives.step_rewards import StepRewards
from tvrl_bench.tracking.params import method_of


def test_permutes_exactly_and_keeps_the_multiset_of_advantages():
    advantages = torch.tensor([1.5, -0.5, -1.0, 0.0, 2.0, -2.0, 0.25, -0.25])
    out = NullControl().advantages(StepRewards(advantages, generator=torch.Generator().manual_seed(3)))
    order = torch.randperm(8, generator=torch.Generator().manual_seed(3))
    assert torch.equal(out, advantages[order])  # exactly the generator's permutation
    assert torch.equal(out.sort().values, advantages.sort().values) and not torch.equal(out, advantages)


def test_the_same_generator_gives_the_same_permutation_and_grpo_leaves_advantages_alone():
    advantages = torch.randn(16)
    a = NullControl().advantages(StepRewards(advantages, generator=torch.Generator().manual_seed(0)))
    b = NullControl().advantages(StepRewards(advantages, generator=torch.Generator().manual_seed(0)))
    assert torch.equal(a, b)
    same = StepRewards(advantages, generator=torch.Generator().manual_seed(0))
    assert CreditWeightedGRPO().advantages(same) is advantages


def test_the_loss_is_the_tvrl_loss_of_the_permuted_advantages():
    logp_new, logp_old = torch.randn(4, 1, 8), torch.randn(4, 1, 8)
    advantages, weights = torch.randn(4), CreditWeights(torch.rand(4, 8) + 0.5)
    null_loss, _ = NullControl().loss(logp_new, logp_old, advantages, weights)
    tvrl_loss, _ = CreditWeightedGRPO().loss(logp_new, logp_old, advantages, weights)
    assert torch.equal(null_loss, tvrl_loss)


def test_preset_builds_it_and_its_runs_are_method_null():
    gin.parse_config_file(str(PROJECT_ROOT / "components/objectives/null.gin"))
    objective = registry.build("OBJECTIVE")
    assert isinstance(objective, NullControl)
    assert method_of("window3", object(), steps=10, objective=objective) == "null"
    assert method_of("window3", object(), steps=0, objective=objective) == "base"
    assert method_of("uniform", object(), steps=10, objective=CreditWeightedGRPO()) == "GRPO"


def test_within_groups_permutes_only_inside_each_group_and_keeps_group_sums():
    advantages = torch.tensor([1.5, -0.5, -1.0, 0.0, 2.0, -2.0, 0.25, -0.25])
    groups = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    out = NullControl(within_groups=True).advantages(StepRewards(advantages, groups, torch.Generator().manual_seed(3)))
    # independently: the generator's permutation of each group's members, in group order
    g = torch.Generator().manual_seed(3)
    expected = advantages.clone()
    for members in (torch.arange(0, 4), torch.arange(4, 8)):
        expected[members] = advantages[members[torch.randperm(4, generator=g)]]
    assert torch.equal(out, expected)
    for members in (slice(0, 4), slice(4, 8)):
        assert torch.equal(out[members].sort().values, advantages[members].sort().values)
    assert not torch.equal(out, advantages)


def test_within_groups_without_group_ids_says_what_is_missing():
    import pytest

    with pytest.raises(ValueError, match="within_groups"):
        NullControl(within_groups=True).advantages(StepRewards(torch.zeros(4), generator=torch.Generator()))


def test_nft_null_permutes_within_groups_and_otherwise_is_nfts_loss():
    from tvrl_bench.objectives.matching import MatchingTerms
    from tvrl_bench.objectives.nft import NegativeAwareFineTuning, NegativeAwareFineTuningNull

    advantages = torch.tensor([1.5, -0.5, -1.0, 0.0, 2.0, -2.0, 0.25, -0.25])
    groups = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    null = NegativeAwareFineTuningNull()
    out = null.advantages(StepRewards(advantages, groups, torch.Generator().manual_seed(3)))
    expected = NullControl(within_groups=True).advantages(StepRewards(advantages, groups, torch.Generator().manual_seed(3)))
    assert torch.equal(out, expected) and not torch.equal(out, advantages)
    # the loss of given advantages is NFT's, term for term
    m, shape = 8, (8, 3, 2, 4, 4)
    terms = MatchingTerms(torch.randn(shape), torch.randn(shape), None, torch.randn(shape), torch.rand(m),
                          lambda x: x.reshape(m, 3, 2, 2, 2, 2, 2).mean((1, 3, 5)).reshape(m, -1))
    weights = CreditWeights(torch.rand(m, 8) + 0.5)
    null_loss, _ = null.policy_loss(terms, out, weights)
    nft_loss, _ = NegativeAwareFineTuning().policy_loss(terms, out, weights)
    assert torch.equal(null_loss, nft_loss)


def test_nft_null_preset_builds_it_and_its_runs_are_method_null():
    from tvrl_bench.objectives.nft import NegativeAwareFineTuningNull

    gin.parse_config_file(str(PROJECT_ROOT / "components/objectives/nft_null.gin"))
    objective = registry.build("OBJECTIVE")
    assert isinstance(objective, NegativeAwareFineTuningNull) and objective.within_groups
    assert method_of("uniform", object(), steps=10, objective=objective) == "null"


def test_a_null_control_states_its_objectives_parameters_without_restating_them():
    registry.import_components()
    nft = registry.get("objectives.nft").parameters()
    assert registry.get("objectives.nft_null").parameters() == [*nft, ("within_groups", True)]
    best = registry.get("objectives.best_of_n").parameters()
    assert registry.get("objectives.best_of_n_null").parameters() == [*best, ("within_groups", True)]
    assert registry.get("objectives.null").parameters() == [("clip_range", 1e-4), ("kl_beta", 0.0),
                                                            ("within_groups", False)]
    gin.clear_config()
    try:
        gin.parse_config("objectives.nft_null.beta = 2.0\nobjectives.nft_null.within_groups = False")
        null = registry.get("objectives.nft_null").target()
        assert (null.beta, null.within_groups, null.method) == (2.0, False, "null")
        with pytest.raises(ValueError, match="betta"):
            gin.parse_config("objectives.nft_null.betta = 2.0")
    finally:
        gin.clear_config()
