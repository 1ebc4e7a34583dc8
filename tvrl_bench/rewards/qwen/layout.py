"""The prompt layout of Qwen video tokens: what the official processors put in the text for a video.

A chat template writes one `<|video_pad|>` per video (inside `<|vision_start|>...<|vision_end|>`). The processor
replaces it with the video's tokens, given the preprocessed video (`qwen_video.QwenVideoInputs`):

- family "qwen3_vl" (`Qwen3VLProcessor`: Qwen3.5, Qwen3-VL): per temporal patch t, the text
  `<{timestamp:.1f} seconds>` then `<|vision_start|>`, grid_h * grid_w / merge_size**2 pad tokens,
  `<|vision_end|>`; these replace the template's whole `<|vision_start|><|video_pad|><|vision_end|>` (so no
  outer pair wraps the frames), as Qwen's processor does (transformers >= 5.25; 5.0-5.24 kept the outer pair). The timestamp is the mean time (index / video_fps) of the first and last frame the patch
  covers, the index list padded with its last entry to a multiple of temporal_patch_size.
- family "qwen2_vl" (`Qwen2VLProcessor`, `Qwen2_5_VLProcessor`): grid_t * grid_h * grid_w / merge_size**2 pad
  tokens in one block.

`mm_token_type_ids` marks image pad tokens 1 and video pad tokens 2 (0 elsewhere); Qwen VL models need it to
build their 3D (M-RoPE) position ids. `encode_video_prompts` returns what the processor's `__call__` returns for
the same text and video: input_ids, attention_mask (padded on the side asked) and mm_token_type_ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from tvrl_bench.rewards.qwen.video import QwenVideoInputs, QwenVideoSettings


@dataclass(frozen=True)
class QwenVisionTokens:
    """The special tokens of a Qwen VL tokenizer that a video layout uses, as strings and ids."""

    video_token: str
    video_token_id: int
    image_token: str
    image_token_id: int
    vision_start: str
    vision_end: str
    pad_token_id: int

    @classmethod
    def from_processor(cls, processor: Any) -> "QwenVisionTokens":
        """Read them from a Qwen VL processor (its tokenizer's own tokens where it names them)."""
        tok = processor.tokenizer
        vision_start = getattr(processor, "vision_start_token", None) or getattr(tok, "vision_start_token", None)
        vision_end = getattr(processor, "vision_end_token", None) or getattr(tok, "vision_end_token", None)
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        if pad_id is None:
            raise ValueError("the tokenizer has neither a pad token nor an eos token to pad batches with")
        return cls(
            video_token=processor.video_token,
            video_token_id=int(processor.video_token_id),
            image_token=processor.image_token,
            image_token_id=int(processor.image_token_id),
            vision_start=vision_start or "<|vision_start|>",
            vision_end=vision_end or "<|vision_end|>",
            pad_token_id=int(pad_id),
        )


def video_timestamps(frame_indices: Sequence[int], video_fps: float, temporal_patch_size: int) -> list[float]:
    """Seconds per temporal patch: mean of the first and last covered frame's time (Qwen3-VL's rule)."""
    indices = [int(i) for i in frame_indices]
    if rest := len(indices) % temporal_patch_size:
        indices += [indices[-1]] * (temporal_patch_size - rest)
    times = [i / video_fps for i in indices]
    return [
        (times[i] + times[i + temporal_patch_size - 1]) / 2 for i in range(0, len(times), temporal_patch_size)
    ]


def video_placeholder(
    settings: QwenVideoSettings,
    grid_thw: Sequence[int] | torch.Tensor,
    frame_indices: Sequence[int],
    video_fps: float,
    tokens: QwenVisionTokens,
) -> str:
    """The text that replaces one `<|video_pad|>` for a video with grid_thw[3] = (t, h, w); see the module docstring."""
    grid_t, grid_h, grid_w = (int(g) for g in grid_thw)
    merge = settings.merge_size**2
    if settings.family == "qwen2_vl":
        return tokens.video_token * (grid_t * grid_h * grid_w // merge)
    per_frame = tokens.video_token * (grid_h * grid_w // merge)
    times = video_timestamps(frame_indices, video_fps, settings.temporal_patch_size)
    return "".join(
        f"<{times[t]:.1f} seconds>{tokens.vision_start}{per_frame}{tokens.vision_end}" for t in range(grid_t)
    )


def expand_video_tokens(texts: Sequence[str], placeholders: Sequence[str], video_token: str) -> list[str]:
    """Replace the video tokens of `texts`, in order across the texts, by one placeholder each."""
    counts = [t.count(video_token) for t in texts]
    if sum(counts) != len(placeholders):
        raise ValueError(
            f"the texts hold {sum(counts)} '{video_token}' tokens but {len(placeholders)} videos were given; "
            "the chat template must write one video token per video"
        )
    pattern = re.compile(re.escape(video_token))
    queue = iter(placeholders)
    return [pattern.sub(lambda _: next(queue), t) for t in texts]


def layout_texts(
    texts: Sequence[str], inputs: QwenVideoInputs, settings: QwenVideoSettings, tokens: QwenVisionTokens
) -> list[str]:
    """Texts with every video token expanded for the videos of `inputs` (in order)."""
    placeholders = [
        video_placeholder(settings, grid, idx, fps, tokens)
        for grid, idx, fps in zip(inputs.video_grid_thw.tolist(), inputs.frame_indices, inputs.video_fps)
    ]
    if settings.family == "qwen3_vl":  # each frame brings its own start and end: the template's wrapper goes
        wrapper = tokens.vision_start + tokens.video_token + tokens.vision_end
        texts = [t.replace(wrapper, tokens.video_token) for t in texts]
    return expand_video_tokens(texts, placeholders, tokens.video_token)


def tokenize_texts(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    """Token ids per text, tokenized the way the processor does (the tokenizer's defaults, no padding)."""
    return [list(ids) for ids in tokenizer(list(texts))["input_ids"]]


def pad_sequences(
    sequences: Sequence[Sequence[int]], pad_token_id: int, padding_side: str = "left"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token id lists -> (input_ids[B, L], attention_mask[B, L]) padded on `padding_side` ('left' or 'right')."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"padding_side must be 'left' or 'right', got '{padding_side}'")
    length = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), length), pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), length), dtype=torch.long)
    for row, seq in enumerate(sequences):
        span = slice(length - len(seq), length) if padding_side == "left" else slice(0, len(seq))
        ids[row, span] = torch.tensor(list(seq), dtype=torch.long)
        mask[row, span] = 1
    return ids, mask


def mm_token_type_ids(input_ids: torch.Tensor, tokens: QwenVisionTokens) -> torch.Tensor:
    """[B, L] modality per token: 1 for image pad tokens, 2 for video pad tokens, 0 for text."""
    types = torch.zeros_like(input_ids)
    types[input_ids == tokens.image_token_id] = 1
    types[input_ids == tokens.video_token_id] = 2
    return types


def encode_video_prompts(
    tokenizer: Any,
    texts: Sequence[str],
    inputs: QwenVideoInputs,
    settings: QwenVideoSettings,
    tokens: QwenVisionTokens,
    padding_side: str = "left",
) -> dict[str, torch.Tensor]:
    """What the processor's `__call__(text=texts, videos=..., padding=True)` returns for the text side.

    Returns {"input_ids": [B, L], "attention_mask": [B, L], "mm_token_type_ids": [B, L]}.
    """
    ids = tokenize_texts(tokenizer, layout_texts(texts, inputs, settings, tokens))
    input_ids, attention_mask = pad_sequences(ids, tokens.pad_token_id, padding_side)
    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "mm_token_type_ids": mm_token_type_ids(input_ids, tokens),
    }
