"""Credit heatmaps overlaid on frames, as PNG files people look at (videos: tvrl_bench.videoio)."""

from __future__ import annotations

from pathlib import Path

import torch

from tvrl_bench.tokens import TokenGrid


def credit_heatmap(video: torch.Tensor, weights: torch.Tensor, grid: TokenGrid, path: str | Path, title: str = "") -> Path:
    """PNG of each frame of video[F, 3, H, W] with its credit weights[T', H', W'] overlaid (one panel per frame).

    Token frame j covers pixel frames per the grid; each pixel shows the weight of the token that covers it.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    video = video.detach().cpu().clamp(0, 1)
    f, _, h, w = video.shape
    per_pixel = pixel_weights(weights.detach().cpu(), grid, (f, h, w))
    vmax = float(per_pixel.max())
    fig, axes = plt.subplots(2, f, figsize=(1.3 * f, 3.0), squeeze=False)
    for i in range(f):
        axes[0, i].imshow(video[i].permute(1, 2, 0).numpy(), interpolation="nearest")
        axes[1, i].imshow(video[i].permute(1, 2, 0).numpy(), interpolation="nearest")
        overlay = axes[1, i].imshow(per_pixel[i].numpy(), cmap="inferno", alpha=0.6, vmin=0, vmax=vmax, interpolation="nearest")
        axes[0, i].set_title(f"frame {i}", fontsize=7)
        for ax in axes[:, i]:
            ax.set_xticks([])
            ax.set_yticks([])
    fig.colorbar(overlay, ax=axes[1, :].tolist(), fraction=0.02, pad=0.01, label="credit")
    if title:
        fig.suptitle(title, fontsize=8)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def pixel_weights(weights: torch.Tensor, grid: TokenGrid, video_shape: tuple[int, int, int]) -> torch.Tensor:
    """Spread token weights[T', H', W'] over the pixels [F, H, W] each token covers."""
    f, h, w = video_shape
    ft, fh, fw = grid.pixel_patch
    spatial = weights.repeat_interleave(fh, dim=1).repeat_interleave(fw, dim=2)[:, :h, :w]
    if grid.causal_first_frame:
        frames = torch.cat([spatial[:1], spatial[1:].repeat_interleave(ft, dim=0)])
    else:
        frames = spatial.repeat_interleave(ft, dim=0)
    return frames[:f]
