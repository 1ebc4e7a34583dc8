"""Writing generated videos as H.264 mp4 files for external evaluators."""

from __future__ import annotations

from pathlib import Path

import torch


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


def write_mp4(video: torch.Tensor, path: str | Path, fps: int = 24, crf: int = 17) -> Path:
    """Write video[F, 3, H, W] in [0, 1] to `path` as H.264 (libx264, yuv420p) at `fps` frames per second."""
    import av

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = to_uint8_frames(video).numpy()
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=int(fps), options={"crf": str(crf)})
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "yuv420p"
        for array in frames:
            container.mux(stream.encode(av.VideoFrame.from_ndarray(array, format="rgb24")))
        container.mux(stream.encode())
    return path
