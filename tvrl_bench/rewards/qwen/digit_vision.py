"""Vision input of the digit-score critics (rewards/qwen/digit_scores.py): a video by qwen-vl-utils' rules (one
`<|video_pad|>` block, `VideoVision`) or frames as separate images (one `<|image_pad|>` block each,
`ImageVision`), as model keyword arguments and the prompt text that replaces each vision placeholder. Both share
one interface: `token` (the placeholder the chat template writes), `per_video` (placeholders per video),
`encode(videos, device)` and `select(vision, rows)`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from tvrl_bench.rewards.qwen.inputs import QwenInputs
from tvrl_bench.rewards.qwen.layout import QwenVisionTokens, layout_texts
from tvrl_bench.rewards.qwen.preprocess_video import QwenVLUtilsVideo, preprocess_videos, sample_images
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings, image_settings_from_processor

VISION_MODES = ("video", "images")
REFERENCE_FPS = 2.0  # qwen-vl-utils' sampling rate in the references (VideoScore2's infer_fps)


def video_rules(inputs: QwenInputs, factor: int, count_rounding: str, max_total_tokens: int | None) -> QwenVLUtilsVideo:
    """qwen-vl-utils' `fetch_video` choices: `inputs.frames`, else `inputs.fps` (None: 2 fps, the references'),
    its per-frame budget of 128-768 tokens x factor^2 (or `inputs`' pixel budget) and the sequence cap."""
    return QwenVLUtilsVideo(
        fps=None if inputs.frames is not None else (inputs.fps or REFERENCE_FPS), nframes=inputs.frames,
        count_rounding=count_rounding, factor=factor, min_pixels=128 * factor * factor,
        max_pixels=768 * factor * factor,
        total_pixels=None if max_total_tokens is None else max_total_tokens * factor * factor * 0.9,
    ).with_overrides(min_pixels=inputs.min_pixels, max_pixels=inputs.max_pixels)


def image_settings(image_processor: Any, inputs: QwenInputs) -> QwenVideoSettings:
    """The image processor's settings with `inputs`' per-image pixel budget where it sets one."""
    budget = {k: v for k, v in (("min_pixels", inputs.min_pixels), ("max_pixels", inputs.max_pixels)) if v is not None}
    return replace(image_settings_from_processor(image_processor), **budget)


class VideoVision:
    """A video by qwen-vl-utils' rules: one `<|video_pad|>` block per video (`per_video` = 1 placeholder)."""

    per_video = 1

    def __init__(
        self,
        rules: QwenVLUtilsVideo,
        settings: QwenVideoSettings,
        video_fps: float,
        tokens: QwenVisionTokens,
        seconds_per_grid: bool,
        rope_fps: float | None,
    ) -> None:
        """
        Args:
            rules: qwen-vl-utils' frame sampling and resize (`video_rules`).
            settings: the checkpoint's video processor settings (normalisation, patchify, token layout).
            video_fps: frame rate of the videos received.
            tokens: the tokenizer's vision tokens.
            seconds_per_grid: pass `second_per_grid_ts` (Qwen2.5-VL's rope input).
            rope_fps: the fps behind `second_per_grid_ts = temporal_patch_size / rope_fps`; None: the sampled fps.
        """
        self.rules = rules
        self.settings = settings
        self.video_fps = video_fps
        self.tokens = tokens
        self.seconds_per_grid = seconds_per_grid
        self.rope_fps = rope_fps
        self.token = tokens.video_token

    def encode(self, videos: torch.Tensor, device: torch.device) -> tuple[dict[str, torch.Tensor], list[list[str]]]:
        """(model keyword arguments for videos[b, F, 3, H, W] in [0, 1], per video the one text replacing its
        placeholder). Differentiable w.r.t. `videos`."""
        settings, tokens = self.settings, self.tokens
        inputs = preprocess_videos(videos, self.rules, settings, self.video_fps)
        texts = layout_texts([tokens.video_token] * len(videos), inputs, settings, tokens)
        kwargs = {"pixel_values_videos": inputs.pixel_values_videos,
                  "video_grid_thw": inputs.video_grid_thw.to(device)}
        if self.seconds_per_grid:
            tps = settings.temporal_patch_size
            seconds = ([tps / self.rope_fps] * len(videos) if self.rope_fps is not None
                       else inputs.second_per_grid_ts(tps))
            kwargs["second_per_grid_ts"] = torch.tensor(seconds, device=device)
        return kwargs, [[t] for t in texts]

    def select(self, vision: dict[str, torch.Tensor], rows: list[int]) -> dict[str, torch.Tensor]:
        """`encode`'s keyword arguments restricted to the videos `rows` (see `select_vision`)."""
        return select_vision(vision, rows, "video", 1)


class ImageVision:
    """A video as `num_images` separate frames, one `<|image_pad|>` block each (`per_video` placeholders)."""

    def __init__(self, settings: QwenVideoSettings, num_images: int, tokens: QwenVisionTokens) -> None:
        """
        Args:
            settings: the image processor's settings (`image_settings`).
            num_images: frames taken per video, at indices int(i * total / num_images).
            tokens: the tokenizer's vision tokens.
        """
        self.settings = settings
        self.per_video = num_images
        self.token = tokens.image_token

    def encode(self, videos: torch.Tensor, device: torch.device) -> tuple[dict[str, torch.Tensor], list[list[str]]]:
        """(model keyword arguments for videos[b, F, 3, H, W] in [0, 1]: pixel_values [N, D] and image_grid_thw
        [b * num_images, 3], per video the `num_images` texts replacing its placeholders). Differentiable."""
        pixels, grids, placeholders = [], [], []
        merge = self.settings.merge_size ** 2
        for video in videos:
            p, g = sample_images(video, self.per_video, self.settings)
            pixels.append(p)
            grids.append(g)
            placeholders.append([self.token * (t * h * w // merge) for t, h, w in g.tolist()])
        return {"pixel_values": torch.cat(pixels), "image_grid_thw": torch.cat(grids).to(device)}, placeholders

    def select(self, vision: dict[str, torch.Tensor], rows: list[int]) -> dict[str, torch.Tensor]:
        """`encode`'s keyword arguments restricted to the videos `rows` (see `select_vision`)."""
        return select_vision(vision, rows, "images", self.per_video)


def select_vision(vision: dict[str, torch.Tensor], rows: list[int], mode: str, num_images: int) -> dict:
    """The vision inputs of a subset of a batch's videos (rows), for a forward over those pairs only.

    `vision` is the `encode` keyword arguments of a batch (`VideoVision`, `ImageVision`): pixel values [N, D] of
    all its videos (or images, `num_images` per video) concatenated, grid_thw [V, 3] one row per video (image),
    and for Qwen2.5-VL video input second_per_grid_ts [b].
    """
    if mode == "video":
        grid_key, pixel_key, per_video = "video_grid_thw", "pixel_values_videos", 1
    else:
        grid_key, pixel_key, per_video = "image_grid_thw", "pixel_values", num_images
    grids = vision[grid_key]
    sizes = grids.prod(-1).tolist()
    starts = [0]
    for s in sizes:
        starts.append(starts[-1] + s)
    pix, grid_rows = [], []
    for r in rows:
        first, last = r * per_video, (r + 1) * per_video
        pix.append(vision[pixel_key][starts[first] : starts[last]])
        grid_rows.extend(range(first, last))
    out = {pixel_key: torch.cat(pix), grid_key: grids[grid_rows]}
    if "second_per_grid_ts" in vision:
        out["second_per_grid_ts"] = vision["second_per_grid_ts"][rows]
    return out
