"""Credit heatmaps: token weights spread over the pixels each token covers, drawn as one PNG per rollout."""

from __future__ import annotations

import torch
from PIL import Image

from tvrl_bench.tokens import TokenGrid
from tvrl_bench.tracking.media import credit_heatmap, pixel_weights


def test_pixel_weights_give_each_pixel_its_tokens_weight():
    grid = TokenGrid((1, 1, 1), (2, 3, 3))
    weights = torch.arange(2 * 2 * 3, dtype=torch.float32).reshape(2, 2, 3)
    per_pixel = pixel_weights(weights, grid, (4, 6, 9))
    assert per_pixel.shape == (4, 6, 9)
    for f in range(4):
        for y in range(6):
            for x in range(9):
                assert per_pixel[f, y, x] == weights[f // 2, y // 3, x // 3]


def test_pixel_weights_crop_tokens_that_overhang_the_video():
    grid = TokenGrid((1, 1, 1), (2, 3, 3))
    weights = torch.rand(3, 2, 2)
    per_pixel = pixel_weights(weights, grid, (5, 5, 4))  # 6 x 6 x 6 pixels of tokens, cropped to 5 x 5 x 4
    assert per_pixel.shape == (5, 5, 4)
    assert per_pixel[4, 4, 3] == weights[2, 1, 1]


def test_pixel_weights_of_a_causal_grid_give_the_first_token_frame_one_pixel_frame():
    grid = TokenGrid((1, 1, 1), (4, 2, 2), causal_first_frame=True)
    weights = torch.tensor([1.0, 2.0, 3.0])[:, None, None].expand(3, 2, 2)
    per_pixel = pixel_weights(weights, grid, (9, 4, 4))  # 1 + 4 x 2 frames
    assert per_pixel[:, 0, 0].tolist() == [1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0]


def test_credit_heatmap_writes_a_png_with_one_column_of_panels_per_frame(tmp_path):
    grid = TokenGrid((1, 2, 2), (2, 2, 2))
    for frames in (4, 8):
        path = credit_heatmap(torch.rand(frames, 3, 16, 16), torch.rand(frames // 2, 8, 8), grid,
                              tmp_path / "nested" / f"step_{frames}.png", title="a red circle")
        assert path == tmp_path / "nested" / f"step_{frames}.png"
        with Image.open(path) as image:
            assert image.format == "PNG"
            assert image.size == (round(1.3 * frames * 110), 330)  # figsize (1.3 F, 3.0) inches at 110 dpi


def test_credit_heatmap_shows_the_weights(tmp_path):
    """The same video with different credit gives a different picture, and the same inputs the same picture."""
    grid = TokenGrid((1, 2, 2), (2, 2, 2))
    video = torch.rand(4, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    flat, peaked = torch.ones(2, 8, 8), torch.ones(2, 8, 8)
    peaked[0, 2, 3] = 50.0

    def pixels(weights, name):
        with Image.open(credit_heatmap(video, weights, grid, tmp_path / name)) as image:
            return image.convert("RGB").tobytes()

    assert pixels(flat, "a.png") == pixels(flat, "b.png")
    assert pixels(flat, "a.png") != pixels(peaked, "c.png")


def test_credit_heatmap_accepts_tensors_that_need_gradients(tmp_path):
    grid = TokenGrid((1, 2, 2), (2, 2, 2))
    video = torch.rand(2, 3, 16, 16, requires_grad=True)
    weights = torch.rand(1, 8, 8, requires_grad=True)
    assert credit_heatmap(video * 1.0, weights * 1.0, grid, tmp_path / "g.png").is_file()
