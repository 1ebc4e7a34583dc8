"""Model inputs of a Qwen VL forward over chat texts that hold one video each, with answer ids appended.

The videos go through the differentiable preprocessing of `qwen/video.py` and the token layout of `qwen/layout.py`
(identical to the checkpoint's processor), the texts are tokenized, each sequence gets its answer ids (the suffix)
and the batch is padded on `padding_side`. Position ids (M-RoPE) come from the model's own code through
`mm_token_type_ids`; Qwen2.5-VL also takes the seconds covered by one temporal patch (`second_per_grid_ts`).
"""

from __future__ import annotations

from typing import Any

import torch

from tvrl_bench.rewards.qwen.layout import (
    QwenVisionTokens,
    layout_texts,
    mm_token_type_ids,
    pad_sequences,
    tokenize_texts,
)
from tvrl_bench.rewards.qwen.video import QwenVideoInputs, preprocess_videos
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings


class VideoPromptEncoder:
    """Videos and their chat texts (+ suffix ids) -> the keyword arguments of `model.model(...)`."""

    def __init__(
        self,
        tokenizer: Any,
        tokens: QwenVisionTokens,
        video_settings: QwenVideoSettings,
        video_fps: float,
        padding_side: str,
        seconds_per_grid: bool,
    ) -> None:
        """
        Args:
            tokenizer: the checkpoint's tokenizer.
            tokens: its vision tokens (video pad, vision start / end, padding id).
            video_settings: the video processor settings the preprocessing follows.
            video_fps: frame rate of the videos received (fps sampling and timestamps).
            padding_side: "left" or "right".
            seconds_per_grid: pass `second_per_grid_ts` (Qwen2.5-VL's rope input).
        """
        self.tokenizer = tokenizer
        self.tokens = tokens
        self.video_settings = video_settings
        self.video_fps = video_fps
        self.padding_side = padding_side
        self.seconds_per_grid = seconds_per_grid

    def preprocess(self, videos: torch.Tensor) -> QwenVideoInputs:
        """videos[b, F, 3, H, W] in [0, 1] -> the processor's pixel values and grids. Differentiable."""
        return preprocess_videos(videos, self.video_settings, self.video_fps)

    def forward_kwargs(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, inputs: QwenVideoInputs, device: torch.device
    ) -> dict[str, Any]:
        """The model's keyword inputs on `device` for padded input_ids[b, L] and attention_mask[b, L] with the
        preprocessed videos `inputs` (pixel values, grid sizes and, for Qwen2.5-VL, seconds per temporal patch)."""
        kwargs: dict[str, Any] = {
            "input_ids": input_ids.to(device),
            "attention_mask": attention_mask.to(device),
            "mm_token_type_ids": mm_token_type_ids(input_ids, self.tokens).to(device),
            "pixel_values_videos": inputs.pixel_values_videos,
            "video_grid_thw": inputs.video_grid_thw.to(device),
            "use_cache": False,
        }
        if self.seconds_per_grid:
            kwargs["second_per_grid_ts"] = torch.tensor(
                inputs.second_per_grid_ts(self.video_settings.temporal_patch_size), device=device
            )
        return kwargs

    def encode(
        self, inputs: QwenVideoInputs, texts: list[str], suffixes: list[list[int]], device: torch.device
    ) -> tuple[dict[str, Any], list[list[int]]]:
        """(model kwargs for the b sequences texts[r] + suffixes[r], token ids of each text before its suffix).

        texts[r] holds one video token, the video of `inputs` row r.
        """
        laid_out = layout_texts(texts, inputs, self.video_settings, self.tokens)
        prompt_ids = tokenize_texts(self.tokenizer, laid_out)
        seqs = [ids + suffix for ids, suffix in zip(prompt_ids, suffixes)]
        input_ids, attention_mask = pad_sequences(seqs, self.tokens.pad_token_id, self.padding_side)
        return self.forward_kwargs(input_ids, attention_mask, inputs, device), prompt_ids

    def model_inputs(
        self, videos: torch.Tensor, texts: list[str], answer_ids: list[int], device: torch.device
    ) -> tuple[dict[str, Any], torch.Tensor]:
        """(model kwargs for videos[b, F, 3, H, W] and their chat texts with `answer_ids` appended, prompt
        lengths [b] in tokens, before the answer)."""
        kwargs, prompt_ids = self.encode(self.preprocess(videos), texts, [answer_ids] * len(texts), device)
        return kwargs, torch.tensor([len(ids) for ids in prompt_ids])
