"""Token footprints: latent patches and pixel footprints (plain and causal)."""

from __future__ import annotations

import pytest
import torch

from tvrl_bench.tokens import TokenGrid, latent_to_tokens, pixels_to_tokens


def test_latent_to_tokens_averages_each_patch_over_channels():
    grid = TokenGrid(latent_patch=(2, 2, 2), pixel_patch=(2, 2, 2))
    values = torch.zeros(1, 3, 4, 4, 4)
    values[0, 1, 2, 0, 2] = 24.0  # lies in token (t=1, h=0, w=1)
    tokens = latent_to_tokens(values, grid)
    assert tokens.shape == (1, 8)
    expected = torch.zeros(8)
    expected[1 * 4 + 0 * 2 + 1] = 24.0 / (3 * 8)
    torch.testing.assert_close(tokens[0], expected)


def test_pixels_to_tokens_plain_grid():
    grid = TokenGrid(latent_patch=(1, 1, 1), pixel_patch=(2, 4, 4))
    values = torch.arange(4 * 8 * 8, dtype=torch.float32).reshape(4, 8, 8)
    pooled = pixels_to_tokens(values, grid)
    assert pooled.shape == (2, 2, 2)
    assert float(pooled[1, 0, 1]) == pytest.approx(float(values[2:4, 0:4, 4:8].mean()))


def test_pixels_to_tokens_causal_grid_puts_frame_zero_alone():
    grid = TokenGrid(latent_patch=(1, 1, 1), pixel_patch=(4, 16, 16), causal_first_frame=True)
    values = torch.rand(2, 9, 32, 16)
    pooled = pixels_to_tokens(values, grid)
    assert pooled.shape == (2, 3, 2, 1)
    assert float(pooled[1, 0, 1, 0]) == pytest.approx(float(values[1, 0, 16:, :].mean()), rel=1e-6)
    assert float(pooled[0, 2, 0, 0]) == pytest.approx(float(values[0, 5:9, :16, :].mean()), rel=1e-6)


def test_mismatched_sizes_are_clear_errors():
    grid = TokenGrid(latent_patch=(1, 2, 2), pixel_patch=(4, 16, 16), causal_first_frame=True)
    with pytest.raises(ValueError, match="4\\*k\\+1 frames"):
        grid.grid_from_video((8, 32, 32))
    with pytest.raises(ValueError, match="not divisible"):
        grid.grid_from_latent((1, 3, 3, 3))
