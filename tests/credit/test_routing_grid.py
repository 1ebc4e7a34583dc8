"""The official routing-grid layout against computations written out here (loops and numpy)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tvrl_bench.credit.routing_grid import RoutingGridRouter, resample, route, zero_padded_pool
from tvrl_bench.tokens import TokenGrid

GRID = TokenGrid(latent_patch=(1, 1, 1), pixel_patch=(4, 16, 16), causal_first_frame=True)


def pool_by_hand(m: np.ndarray, k: int) -> np.ndarray:
    """k x k mean with zeros outside the map, always dividing by k * k."""
    h, w = m.shape
    r = k // 2
    out = np.zeros_like(m)
    for i in range(h):
        for j in range(w):
            total = 0.0
            for di in range(-r, r + 1):
                for dj in range(-r, r + 1):
                    if 0 <= i + di < h and 0 <= j + dj < w:
                        total += m[i + di, j + dj]
            out[i, j] = total / (k * k)
    return out


def linear_weights(n_in: int, n_out: int) -> np.ndarray:
    """W[n_out, n_in] of 1-D linear resampling with half-pixel centres (align_corners=False), clamped at ends."""
    w = np.zeros((n_out, n_in))
    for o in range(n_out):
        x = min(max((o + 0.5) * n_in / n_out - 0.5, 0.0), n_in - 1)
        lo = int(np.floor(x))
        hi = min(lo + 1, n_in - 1)
        w[o, lo] += 1 - (x - lo)
        w[o, hi] += x - lo
    return w


def trilinear_by_hand(m: np.ndarray, size) -> np.ndarray:
    t, h, w = m.shape
    wt, wh, ww = linear_weights(t, size[0]), linear_weights(h, size[1]), linear_weights(w, size[2])
    return np.einsum("at,bh,cw,thw->abc", wt, wh, ww, m)


def test_zero_padded_pooling_matches_the_hand_loop():
    m = np.random.default_rng(0).random((7, 9))
    for k in (1, 3, 5):
        got = zero_padded_pool(torch.tensor(m)[None, None, None], k)[0, 0, 0].numpy()
        np.testing.assert_allclose(got, pool_by_hand(m, k), rtol=1e-12)


def test_trilinear_resampling_matches_separable_linear_interpolation():
    m = np.random.default_rng(1).random((3, 5, 4))
    for size in [(9, 2, 3), (9, 16, 16), (3, 22, 39)]:
        got = resample(torch.tensor(m), size).numpy()
        np.testing.assert_allclose(got, trilinear_by_hand(m, size), rtol=1e-10, atol=1e-12)


def test_official_uniform_baseline_has_lighter_borders():
    pooled = zero_padded_pool(torch.ones(1, 16, 16, dtype=torch.float64), 3)[0]
    pooled = pooled / pooled.mean()
    assert float(pooled[5, 5]) == pytest.approx(1.0889, abs=1e-4)
    assert float(pooled[0, 5]) == pytest.approx(0.7259, abs=1e-4)
    assert float(pooled[0, 0]) == pytest.approx(0.4840, abs=1e-4)


def test_route_is_the_documented_pipeline():
    g = torch.rand(2, 3, 10, 2, 4, dtype=torch.float64)
    latent = (9, 2, 3)
    got = route(g, latent, bins=16, k=3)
    for b in range(2):
        for k in range(3):
            m = g[b, k].numpy()
            m = m / m.sum(axis=(1, 2), keepdims=True)
            r = trilinear_by_hand(m, (10, 16, 16))
            r = r / r.sum(axis=(1, 2), keepdims=True)
            s = np.stack([pool_by_hand(r[t], 3) for t in range(10)])
            s = s / s.sum(axis=(1, 2), keepdims=True)
            c = trilinear_by_hand(s, latent)
            np.testing.assert_allclose(got[b, k].numpy(), c / c.mean(), rtol=1e-5)
    assert (got.mean(dim=(-2, -1)) > 0).all()  # every latent frame gets credit


def test_uniform_critic_maps_give_equal_credit_per_latent_frame():
    video = torch.zeros(1, 33, 3, 32, 48)
    w = RoutingGridRouter()(torch.ones(1, 2, 10, 2, 4), video, GRID)
    per_frame = w.mean(dim=(-2, -1))
    torch.testing.assert_close(per_frame, torch.ones_like(per_frame))


def test_controls_uniform_needs_no_gradient_and_shuffled_permutes_per_rollout_and_check():
    video = torch.zeros(2, 33, 3, 32, 48)
    uniform = RoutingGridRouter(control="uniform")
    assert not uniform.needs_grads and uniform.grad_space == "critic"
    flat = uniform(None, video, GRID)
    torch.testing.assert_close(flat[0], flat[1])
    assert float(flat.mean()) == pytest.approx(1.0)
    g = torch.rand(2, 2, 10, 2, 4)
    shuffled = RoutingGridRouter(control="shuffled", seed=3)
    a = shuffled.per_check(g, video, GRID)
    again = RoutingGridRouter(control="shuffled", seed=3)
    torch.testing.assert_close(again.per_check(g, video, GRID), a)  # seeded
    assert not torch.allclose(a, RoutingGridRouter().per_check(g, video, GRID))
    state = shuffled.state_dict()
    nxt = shuffled.per_check(g, video, GRID)
    resumed = RoutingGridRouter(control="shuffled", seed=3)
    resumed.load_state_dict(state)
    torch.testing.assert_close(resumed.per_check(g, video, GRID), nxt)


def test_a_critic_without_patch_gradients_is_refused_with_the_fix():
    from tvrl_bench.rewards.toy_oracle import ToyOracle
    from tvrl_bench.training.scoring import score_videos

    with pytest.raises(ValueError, match="pixel-space router"):
        score_videos(ToyOracle(), torch.rand(1, 4, 3, 16, 16), ["a red circle"], [["Is there a red circle?"]],
                     need_grads=True, space="critic")
