"""Videos and credit heatmaps as files people look at: mp4 (H.264, plays in the MLflow UI) and PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from tvrl_bench.tokens import TokenGrid


def upscale(video: torch.Tensor, min_side: int = 128) -> torch.Tensor:
    """Nearest-neighbour upscale of video[F, 3, H, W] so its shorter side is at least min_side (even sizes)."""
    f, c, h, w = video.shape
    factor = max(1, -(-min_side // min(h, w)))
    out = video.repeat_interleave(factor, dim=2).repeat_interleave(factor, dim=3)
    return out[:, :, : out.shape[2] // 2 * 2, : out.shape[3] // 2 * 2]


def write_mp4(video: torch.Tensor, path: str | Path, fps: float = 4.0, min_side: int = 128) -> Path:
    """Write video[F, 3, H, W] in [0, 1] as an H.264 mp4 (nearest-upscaled so tiny videos are visible)."""
    import av

    frames = (upscale(video.detach().cpu().clamp(0, 1), min_side) * 255).round().to(torch.uint8)
    frames = frames.permute(0, 2, 3, 1).numpy()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=max(1, round(fps)))
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": "18"}
        for frame in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(frame), format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


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
