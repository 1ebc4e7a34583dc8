"""Credit weights from the router to the loss: the layout chosen once, rows taken together, the merged map kept."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.credit.base import CreditRouter
from tvrl_bench.credit.weights import MERGED, PER_CHECK, CreditWeights, route
from tvrl_bench.credit.window import WindowRouter
from tvrl_bench.tokens import TokenGrid

GRID = TokenGrid(latent_patch=(1, 1, 1), pixel_patch=(1, 1, 1))


def test_merged_weights_give_tokens_per_rollout_and_index_rows():
    maps = torch.rand(3, 2, 4, 4, generator=torch.Generator().manual_seed(0))
    weights = CreditWeights(maps)
    assert weights.layout == MERGED and len(weights) == 3
    torch.testing.assert_close(weights.tokens(), maps.reshape(3, 32), rtol=0, atol=0)
    rows = weights[torch.tensor([2, 0])]
    assert rows.layout == MERGED
    torch.testing.assert_close(rows.merged, maps[[2, 0]], rtol=0, atol=0)
    with pytest.raises(ValueError, match="per_check"):
        weights.by_check()


def test_per_check_weights_zero_missing_checks_and_keep_the_merged_map():
    g = torch.Generator().manual_seed(1)
    maps, merged = torch.rand(2, 3, 1, 2, 2, generator=g) + 0.1, torch.rand(2, 1, 2, 2, generator=g)
    mask = torch.tensor([[True, True, True], [True, False, False]])
    weights = CreditWeights.of_checks(merged, maps, mask)
    checks, kept = weights.by_check()
    assert weights.layout == PER_CHECK and checks.shape == (2, 3, 4)
    assert torch.equal(kept, mask)
    assert (checks[~mask] == 0).all()
    torch.testing.assert_close(checks[mask], maps.reshape(2, 3, 4)[mask], rtol=0, atol=0)
    assert weights.merged is merged  # what the step's metrics and media show
    rows = weights[torch.tensor([1])]
    assert rows.layout == PER_CHECK and torch.equal(rows.mask, mask[[1]])
    torch.testing.assert_close(rows.checks, checks[[1]], rtol=0, atol=0)
    torch.testing.assert_close(rows.merged, merged[[1]], rtol=0, atol=0)


def test_a_map_shared_by_every_check_serves_all_of_them():
    shared = torch.ones(2, 1, 1, 2, 2)
    weights = CreditWeights.of_checks(shared[:, 0], shared, torch.tensor([[True, False], [True, True]]))
    checks, mask = weights.by_check()
    assert checks.shape == (2, 1, 4) and mask.all()


class Recording(CreditRouter):
    """A router that records which of its maps were asked for, in order."""

    needs_grads = False

    def __init__(self):
        self.calls = []

    def __call__(self, grads, video, grid, mask=None):
        self.calls.append("merged")
        return torch.full((video.shape[0], 1, 4, 4), 1.0)

    def per_check(self, grads, video, grid, mask=None):
        self.calls.append("per_check")
        return torch.full((video.shape[0], mask.shape[1], 1, 4, 4), 1.0)


def test_route_asks_the_router_for_the_layout_only_and_the_merged_map_first():
    video, mask = torch.zeros(2, 1, 3, 4, 4), torch.tensor([[True, False], [True, True]])
    merged = Recording()
    assert route(merged, None, video, GRID, mask).layout == MERGED and merged.calls == ["merged"]
    per_check = Recording()
    weights = route(per_check, None, video, GRID, mask, PER_CHECK)
    assert per_check.calls == ["merged", "per_check"]
    assert torch.equal(weights.by_check()[1], mask) and weights.merged.shape == (2, 1, 4, 4)
    with pytest.raises(ValueError, match="layout"):
        route(Recording(), None, video, GRID, mask, "pooled")


def test_routed_weights_are_the_routers_maps():
    g = torch.Generator().manual_seed(2)
    grads, video = torch.rand(2, 2, 1, 4, 4, generator=g), torch.zeros(2, 1, 3, 4, 4)
    mask = torch.tensor([[True, True], [True, False]])
    router = WindowRouter(k=1)
    weights = route(router, grads, video, GRID, mask, PER_CHECK)
    torch.testing.assert_close(weights.merged, router(grads, video, GRID, mask), rtol=0, atol=0)
    expected = router.per_check(grads, video, GRID, mask).reshape(2, 2, -1) * mask[..., None]
    torch.testing.assert_close(weights.by_check()[0], expected, rtol=0, atol=0)
