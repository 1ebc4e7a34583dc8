"""Credit routers on hand-made gradient maps: window semantics, frame sums, shuffling, mean 1, detachment."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.credit import combine, credit_entropy, normalise
from tvrl_bench.extractors.frame_difference import FrameDifference
from tvrl_bench.credit.feature_map import FeatureMapRouter
from tvrl_bench.credit.frame import FrameRouter
from tvrl_bench.credit.shuffled import ShuffledRouter
from tvrl_bench.credit.uniform import UniformRouter
from tvrl_bench.credit.window import WindowRouter, window_average
from tvrl_bench.tokens import TokenGrid

# One pixel per token keeps hand-made maps readable: grads[B, K, F, H, W] are already token maps.
PIXEL_GRID = TokenGrid(latent_patch=(1, 1, 1), pixel_patch=(1, 1, 1))


def spike(shape=(1, 1, 1, 5, 5), at=(0, 0, 0, 2, 2), value=9.0):
    g = torch.zeros(shape)
    g[at] = value
    return g


def video_like(grads):
    b, _, f, h, w = grads.shape
    return torch.zeros(b, f, 3, h, w)


def test_window3_spreads_a_centre_spike_evenly_over_its_3x3_neighbourhood():
    g = spike()
    w = WindowRouter(k=3)(g, video_like(g), PIXEL_GRID)
    # Each token inside the 3x3 block around the spike averages 9 tokens (or fewer at borders) with one spike.
    raw = torch.zeros(5, 5)
    for r in range(5):
        for c in range(5):
            rows = range(max(r - 1, 0), min(r + 2, 5))
            cols = range(max(c - 1, 0), min(c + 2, 5))
            raw[r, c] = sum(9.0 if (i, j) == (2, 2) else 0.0 for i in rows for j in cols) / (len(rows) * len(cols))
    torch.testing.assert_close(w[0, 0], raw / raw.mean())
    assert (w[0, 0, 1:4, 1:4] > 0).all() and w[0, 0, 0].abs().sum() == 0


def test_window_cut_at_the_border_averages_only_existing_tokens():
    maps = torch.zeros(1, 1, 3, 3)
    maps[..., 0, 0] = 4.0
    smoothed = window_average(maps, 3)
    assert float(smoothed[0, 0, 0, 0]) == pytest.approx(1.0)  # (4 + 0 + 0 + 0) / 4 tokens in the corner window
    assert float(smoothed[0, 0, 1, 1]) == pytest.approx(4.0 / 9)
    uniform = torch.ones(2, 1, 4, 6)
    torch.testing.assert_close(window_average(uniform, 7), uniform)


def test_window1_is_the_unsmoothed_map():
    g = torch.rand(2, 3, 2, 4, 4)
    w = WindowRouter(k=1)(g, video_like(g), PIXEL_GRID)
    expected = (g / g.mean(dim=(-3, -2, -1), keepdim=True)).mean(dim=1)
    torch.testing.assert_close(w, expected / expected.mean(dim=(-3, -2, -1), keepdim=True))


@pytest.mark.parametrize("k", [0, 2, -1])
def test_window_size_must_be_odd_and_positive(k):
    with pytest.raises(ValueError, match="odd integer"):
        WindowRouter(k=k)


def test_frame_router_sums_credit_per_frame():
    g = torch.zeros(1, 1, 2, 2, 2)
    g[0, 0, 0, 0, 0] = 3.0
    g[0, 0, 1] = 0.25  # frame 1 total 1.0
    w = FrameRouter()(g, video_like(g), PIXEL_GRID)
    # frame totals 3 and 1 -> per-token values 3 and 1 -> normalised by mean 2
    torch.testing.assert_close(w[0, 0], torch.full((2, 2), 1.5))
    torch.testing.assert_close(w[0, 1], torch.full((2, 2), 0.5))


def test_shuffled_keeps_the_multiset_of_window_values_and_is_seeded():
    g = torch.rand(3, 2, 2, 6, 6)
    window = WindowRouter(k=3)(g, video_like(g), PIXEL_GRID)
    first = ShuffledRouter(k=3, seed=7)(g, video_like(g), PIXEL_GRID)
    again = ShuffledRouter(k=3, seed=7)(g, video_like(g), PIXEL_GRID)
    for b in range(3):
        torch.testing.assert_close(first[b].flatten().sort().values, window[b].flatten().sort().values)
    assert not torch.equal(first, window)
    torch.testing.assert_close(first, again)


def test_weights_have_mean_one_per_rollout_and_are_detached():
    g = torch.rand(4, 3, 4, 8, 8, requires_grad=True)
    grid = TokenGrid(latent_patch=(1, 1, 1), pixel_patch=(2, 2, 2))
    video = torch.rand(4, 4, 3, 8, 8)
    mask = torch.tensor([[True, True, False], [True, True, True], [True, False, False], [True, True, True]])
    routers = [WindowRouter(3), WindowRouter(1), WindowRouter(7), FrameRouter(), ShuffledRouter(), UniformRouter()]
    routers += [WindowRouter(3, combine="max"), WindowRouter(3, combine="pooled")]
    for router in routers:
        w = router(g, video, grid, mask)
        assert w.shape == (4, 2, 4, 4)
        torch.testing.assert_close(w.mean(dim=(1, 2, 3)), torch.ones(4))
        assert not w.requires_grad


def test_combine_mean_ignores_masked_checks():
    a = normalise(torch.rand(1, 1, 1, 3, 3))
    junk = torch.full((1, 1, 1, 3, 3), 100.0)
    combined = combine(torch.cat([a, junk], dim=1), torch.tensor([[True, False]]))
    torch.testing.assert_close(combined, a[:, 0])


def test_a_check_without_gradient_gets_uniform_credit():
    g = torch.zeros(1, 1, 1, 3, 3)
    w = WindowRouter(3)(g, video_like(g), PIXEL_GRID)
    torch.testing.assert_close(w, torch.ones(1, 1, 3, 3))


def test_pixel_gradients_are_pooled_onto_the_generators_tokens():
    grid = TokenGrid(latent_patch=(1, 1, 1), pixel_patch=(2, 4, 4))
    g = torch.zeros(1, 1, 4, 8, 8)
    g[0, 0, 3, 5, 1] = 1.0  # pixel frame 3, row 5, col 1 -> token (1, 1, 0)
    w = WindowRouter(k=1)(g, torch.zeros(1, 4, 3, 8, 8), grid)
    expected = torch.zeros(2, 2, 2)
    expected[1, 1, 0] = 8.0  # all credit on one of 8 tokens, mean 1
    torch.testing.assert_close(w[0], expected)


def test_uniform_router_needs_no_gradients():
    router = UniformRouter()
    assert router.needs_grads is False
    grid = TokenGrid(latent_patch=(1, 2, 2), pixel_patch=(2, 2, 2))
    w = router(None, torch.rand(3, 8, 3, 16, 16), grid)
    torch.testing.assert_close(w, torch.ones(3, 4, 8, 8))


def test_feature_map_router_uses_the_extractor_and_no_reward_gradient():
    video = torch.zeros(1, 4, 3, 4, 4)
    video[0, 2:, :, 1, 1] = 1.0  # a pixel lights up at frame 2
    router = FeatureMapRouter(FrameDifference(), k=1)
    assert router.needs_grads is False
    w = router(None, video, PIXEL_GRID)
    assert w.shape == (1, 4, 4, 4)
    assert float(w[0, 2, 1, 1]) == pytest.approx(w.numel() / 1.0)  # all saliency on one token


def test_credit_entropy_is_one_for_uniform_and_zero_for_a_single_token():
    uniform = torch.ones(2, 2, 4, 4)
    one_hot = torch.zeros(1, 2, 4, 4)
    one_hot[0, 1, 2, 3] = 32.0
    torch.testing.assert_close(credit_entropy(uniform), torch.ones(2))
    torch.testing.assert_close(credit_entropy(one_hot), torch.zeros(1))
    half = torch.zeros(1, 2, 4, 4)
    half[0, 0] = 2.0
    assert float(credit_entropy(half)) == pytest.approx(4 / 5)  # log 16 / log 32
