"""Video files: H.264 mp4 writing (playable in browsers and the MLflow UI) and reading back as tensors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch


def upscale(video: torch.Tensor, min_side: int) -> torch.Tensor:
    """Nearest-neighbour upscale of video[F, 3, H, W] by an integer factor so its shorter side is >= min_side."""
    factor = max(1, -(-min_side // min(video.shape[-2:])))
    return video.repeat_interleave(factor, dim=2).repeat_interleave(factor, dim=3)


def to_uint8_frames(video: torch.Tensor) -> torch.Tensor:
    """video[F, 3, H, W] in [0, 1] -> frames[F, H', W', 3] uint8, H' and W' rounded up to even (edge padding).

    yuv420p (what H.264 players and decoders expect) needs even sizes.
    """
    if video.dim() != 4 or video.shape[1] != 3:
        raise ValueError(f"expected a video[F, 3, H, W], got shape {tuple(video.shape)}")
    frames = (video.detach().float().clamp(0, 1) * 255).round().to(torch.uint8).cpu()
    pad_h, pad_w = frames.shape[2] % 2, frames.shape[3] % 2
    if pad_h or pad_w:
        frames = torch.nn.functional.pad(frames.float(), (0, pad_w, 0, pad_h), mode="replicate").to(torch.uint8)
    return frames.permute(0, 2, 3, 1).contiguous()


def write_mp4(video: torch.Tensor, path: str | Path, fps: float = 24, crf: int = 17, min_side: int | None = None) -> Path:
    """Write video[F, 3, H, W] in [0, 1] to `path` as H.264 (libx264, yuv420p).

    min_side: nearest-neighbour upscale tiny videos (toy world: 16 x 16) so people can see them.
    """
    import av

    if min_side:
        video = upscale(video.detach().cpu(), min_side)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = to_uint8_frames(video).numpy()
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=max(1, round(fps)), options={"crf": str(crf)})
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "yuv420p"
        for array in frames:
            container.mux(stream.encode(av.VideoFrame.from_ndarray(array, format="rgb24")))
        container.mux(stream.encode())
    return path


def read_video(path: str | Path) -> torch.Tensor:
    """video[F, 3, H, W] float32 in [0, 1] from a video file (every frame, RGB)."""
    import av

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"video file not found: {path}")
    with av.open(str(path)) as container:
        frames = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    if not frames:
        raise ValueError(f"{path}: no video frames could be decoded")
    array = np.stack(frames).astype(np.float32) / 255.0  # [F, H, W, 3]
    return torch.from_numpy(array).permute(0, 3, 1, 2).contiguous()
