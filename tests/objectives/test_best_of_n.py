"""Best-of-N distillation: which rollouts it fits, its loss against an independent computation, its null control."""

from __future__ import annotations

import gin
import pytest
import torch

from tvrl_bench import registry
from tvrl_bench.config import PROJECT_ROOT
from tvrl_bench.credit.weights import CreditWeights
from tvrl_bench.objectives.best_of_n import BestOfNDistillation, BestOfNDistillationNull, top_units
from tvrl_bench.objectives.matching import MatchingTerms
from tvrl_bench.objectives.step_rewards import StepRewards
from tvrl_bench.tracking.params import method_of

M, SHAPE = 4, (3, 2, 4, 4)  # latents [M, C, T, H, W]; tokens of 1 x 2 x 2 latent elements: 2 x 2 x 2 = 8 per rollout


def to_tokens(x: torch.Tensor) -> torch.Tensor:
    """[M, 3, 2, 4, 4] -> [M, 8] the mean over each token's 3 x 1 x 2 x 2 elements, tokens (t, h, w) row-major."""
    return x.reshape(len(x), 3, 2, 2, 2, 2, 2).mean((1, 4, 6)).reshape(len(x), -1)


def test_it_fits_each_groups_top_k_and_skips_groups_without_a_best():
    rows = torch.tensor([4, 5, 6, 7, 8, 9, 10, 11, 12, 13])
    groups = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1, 2, 2])
    advantages = torch.tensor([0.1, 0.9, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 1.0])  # group 1: all equal
    assert top_units(rows, advantages, groups, 1).tolist() == [[5], [13]]
    assert top_units(rows, advantages, groups, 2).tolist() == [[5], [4], [13], [12]]
    assert BestOfNDistillation(top_k=1).units(rows, advantages, groups).tolist() == [[5], [13]]
    assert top_units(rows, torch.zeros(10), groups, 1).shape == (0, 1)
    # a tie at the cut goes to the earlier row
    assert top_units(torch.tensor([0, 1, 2]), torch.tensor([1.0, 1.0, -2.0]), torch.zeros(3), 1).tolist() == [[0]]


@pytest.mark.parametrize("weighting,power", [("uniform", 0), ("t", 1), ("t**2", 2)])
def test_the_loss_is_the_credit_weighted_flow_matching_error_of_the_fitted_rollouts(weighting, power):
    g = torch.Generator().manual_seed(0)
    v, target = torch.randn(M, *SHAPE, generator=g, dtype=torch.float64), torch.randn(M, *SHAPE, generator=g, dtype=torch.float64)
    sigma = torch.tensor([1.0, 0.8, 0.5, 0.2], dtype=torch.float64)
    w = torch.rand(M, 8, generator=g, dtype=torch.float64) + 0.5
    terms = MatchingTerms(v, v.clone(), None, target, sigma, to_tokens)
    loss, stats = BestOfNDistillation(weighting=weighting).policy_loss(terms, torch.zeros(M), CreditWeights(w))
    # independently: each token's 12 elements picked out by hand, squared error summed, weighted by its credit
    expected = torch.zeros((), dtype=torch.float64)
    for i in range(M):
        for n in range(8):
            t, rest = divmod(n, 4)
            h, col = divmod(rest, 2)
            miss = (v[i] - target[i])[:, t, 2 * h:2 * h + 2, 2 * col:2 * col + 2]
            expected += w[i, n] * sigma[i] ** power * (miss**2).mean() / 8
    assert torch.allclose(loss.double(), expected / M, rtol=1e-6, atol=0)  # the error is computed in float32
    assert torch.allclose(stats["distill_error"].double(), expected / M, rtol=1e-6, atol=0)


def test_credit_on_one_token_fits_that_tokens_velocity_only():
    v = torch.zeros(1, *SHAPE, requires_grad=True)
    target = torch.ones(1, *SHAPE)
    w = torch.zeros(1, 8)
    w[0, 5] = 8.0
    terms = MatchingTerms(v, v.detach(), None, target, torch.tensor([0.5]), to_tokens)
    loss, _ = BestOfNDistillation(weighting="uniform").policy_loss(terms, torch.zeros(1), CreditWeights(w))
    loss.backward()
    moved = v.grad[0] != 0
    assert moved.sum() == 12 and bool(moved[:, 1, 0:2, 2:4].all())  # token 5 = (t 1, h 0, w 1)
    assert bool((v.grad[0][moved] < 0).all())  # descending the loss moves v towards the target


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="top_k"):
        BestOfNDistillation(top_k=0)
    with pytest.raises(ValueError, match="weighting"):
        BestOfNDistillation(weighting="sigma")


def test_the_null_fits_a_random_rollout_of_each_group():
    rows, groups = torch.arange(8), torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    advantages = torch.tensor([1.5, -0.5, -1.0, 0.0, 2.0, -2.0, 0.25, -0.25])
    null = BestOfNDistillationNull()
    picked = set()
    for seed in range(40):
        permuted = null.advantages(StepRewards(advantages, groups, torch.Generator().manual_seed(seed)))
        units = null.units(rows, permuted, groups).flatten().tolist()
        assert len(units) == 2 and units[0] < 4 <= units[1]  # one rollout of each group
        picked.update(units)
    assert picked == set(range(8))  # every rollout is distilled some time, the best no more than the rest


def test_presets_build_them_and_the_nulls_runs_are_method_null():
    for preset, cls in [("best_of_n.gin", BestOfNDistillation), ("best_of_n_null.gin", BestOfNDistillationNull)]:
        gin.clear_config()
        gin.parse_config_file(str(PROJECT_ROOT / "components/objectives" / preset))
        objective = registry.build("OBJECTIVE")
        assert type(objective) is cls and objective.top_k == 1 and objective.weighting == "t"
    assert objective.within_groups and method_of("uniform", object(), steps=10, objective=objective) == "null"
    gin.clear_config()
