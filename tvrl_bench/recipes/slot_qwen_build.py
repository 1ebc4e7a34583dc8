"""Tiny real Qwen checkpoints for the slot world's learned critics, built from configs (nothing is downloaded).

Every piece is a real transformers class written with `save_pretrained`, so the critics load it as they would a
released checkpoint folder:

- `slot_tokenizer(kind)`: a byte-level BPE tokenizer of the Qwen class (`Qwen3_5Tokenizer` or `Qwen2Tokenizer`):
  256 byte tokens, merges that make every word the slot world's prompts, checks and chat turns use one token
  ("Ġtop", "Ġleft", "Ġred", "Yes", ...), Qwen's special tokens and a chat template modelled on the family's
  (Qwen3.5: an empty think block when thinking is off; Qwen2-VL: a default system message);
- `slot_processor(kind, tokenizer)`: the family's real processor (`Qwen3VLProcessor` + `Qwen3VLVideoProcessor`,
  `Qwen2VLProcessor` + `Qwen2VLVideoProcessor`) with patch 4, merge 2, temporal patch 2, so that a 16 x 16 frame
  is 2 x 2 merged tokens: one token per slot of the 2 x 2 slot world and per pair of frames;
- `answer_model(size, tokenizer)`: `Qwen3_5ForConditionalGeneration` from a `QwenSize` (text width and depth,
  vision width and depth), full attention in every text layer;
- `scorer_model(size, tokenizer)`: `Qwen2VLForConditionalGeneration` for the VideoAlign-class scorer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

SPECIAL_TOKENS = ("<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
                  "<|video_pad|>")
THINK_TOKENS = ("<think>", "</think>")
# Words that become single tokens (with and without a leading space): the slot grammar's, the checks', the chat's.
WORDS = ("Is", "the", "top", "bottom", "left", "right", "middle", "object", "red", "green", "blue", "yellow",
         "magenta", "cyan", "at", "and", "Yes", "No", "user", "assistant", "system", "Please", "answer", "or",
         "Rate", "video", "You", "are", "a", "helpful", "seconds", "What", "is", "colour")
VIDEO_FRAMES = 4  # frames the processor samples from a clip: two temporal patches
PROCESSOR = {"patch_size": 4, "temporal_patch_size": 2, "merge_size": 2, "min_frames": 2, "max_frames": 32}
QWEN3_SIZE = {"shortest_edge": 4 * 16 * 16, "longest_edge": 8 * 16 * 16}  # over all sampled frames: no resize
QWEN2_SIZE = {"shortest_edge": 16 * 16, "longest_edge": 16 * 16}  # per frame: no resize

_VISION = (
    "{%- if item['type'] == 'image' -%}{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}"
    "{%- elif item['type'] == 'video' -%}{{- '<|vision_start|><|video_pad|><|vision_end|>' -}}{%- endif -%}"
)
_TEXT = "{%- if item['type'] == 'text' -%}{{- item['text'] -}}{%- endif -%}"


VIDEO_BLOCK = "<|vision_start|><|video_pad|><|vision_end|>"
REWARD_MARK = "<|VQ_reward|>"  # VideoAlign's first reward token
PLACES = ("first", "after_text", "before_rewards")


def _content(video: str) -> str:
    """A message's content: its video first (Qwen's templates: items in order), after its text, or inside its text
    just before VideoAlign's reward tokens (`video` in PLACES)."""
    if video == "first":
        items = ["{%- for item in message['content'] -%}" + _VISION + _TEXT + "{%- endfor -%}"]
    elif video == "after_text":
        items = ["{%- for item in message['content'] -%}" + _TEXT + "{%- endfor -%}",
                 "{%- for item in message['content'] -%}" + _VISION + "{%- endfor -%}"]
    elif video == "before_rewards":
        items = ["{%- for item in message['content'] -%}{%- if item['type'] == 'text' -%}"
                 "{{- item['text'].replace('" + REWARD_MARK + "', '" + VIDEO_BLOCK + REWARD_MARK + "') -}}"
                 "{%- endif -%}{%- endfor -%}"]
    else:
        raise ValueError(f"video place {video!r}: expected one of {PLACES}")
    return ("{%- if message['content'] is string -%}{{- message['content'] -}}{%- else -%}" + "".join(items)
            + "{%- endif -%}")


def chat_template(kind: str, video: str = "first") -> str:
    """The chat template of a tiny checkpoint, modelled on the family's (Qwen3.5: an empty think block when
    thinking is off; Qwen2-VL: a default system message). `video` places a user turn's video (PLACES): first, as
    Qwen's templates do; after its text; or just before VideoAlign's reward tokens, so that the video's tokens can
    attend to the prompt before them and the reward tokens to both (the decoder is causal)."""
    content = _content(video)
    if kind == "qwen3_5":
        return ("{%- for message in messages -%}"
                "{{- '<|im_start|>' + message['role'] + '\n' -}}" + content + "{{- '<|im_end|>\n' -}}"
                "{%- endfor -%}"
                "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}"
                "{%- if enable_thinking is defined and enable_thinking is false -%}{{- '<think>\n\n</think>\n\n' -}}"
                "{%- else -%}{{- '<think>\n' -}}{%- endif -%}{%- endif -%}")
    if kind == "qwen2_vl":
        return ("{%- for message in messages -%}"
                "{%- if loop.first and message['role'] != 'system' -%}"
                "{{- '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' -}}{%- endif -%}"
                "{{- '<|im_start|>' + message['role'] + '\n' -}}" + content + "{{- '<|im_end|>\n' -}}"
                "{%- endfor -%}"
                "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}")
    raise ValueError(f"unknown tiny Qwen kind {kind!r}; kinds are {', '.join(KINDS)}")


KINDS = ("qwen3_5", "qwen2_vl")


@dataclass(frozen=True)
class QwenSize:
    """A tiny Qwen's widths and depths: text hidden size, layers and heads; vision hidden size and blocks."""

    hidden: int = 64
    layers: int = 2
    heads: int = 4
    vision_hidden: int = 64
    vision_depth: int = 1
    init_std: float = 0.02


def byte_symbols() -> dict[int, str]:
    """Byte -> printable symbol of byte-level BPE (printable bytes keep their character, the rest shift up)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    symbols, shift = {}, 0
    for b in range(256):
        if b in printable:
            symbols[b] = chr(b)
        else:
            symbols[b] = chr(256 + shift)
            shift += 1
    return symbols


def _bpe_tokenizer(kind: str, merges: list[tuple[str, str]]) -> Any:
    from transformers import Qwen2Tokenizer
    from transformers.models.qwen3_5.tokenization_qwen3_5 import Qwen3_5Tokenizer

    symbols = byte_symbols()
    vocab = {symbols[b]: b for b in range(256)}
    for left, right in merges:
        vocab.setdefault(left + right, len(vocab))
    vocab["<|endoftext|>"] = len(vocab)
    cls = Qwen3_5Tokenizer if kind == "qwen3_5" else Qwen2Tokenizer
    return cls(vocab=vocab, merges=list(merges), errors="replace")


def slot_tokenizer(kind: str) -> Any:
    """A real byte-level BPE tokenizer of the Qwen class for `kind` with the slot world's words as tokens.

    Merges are added until BPE reads every word of WORDS, alone and after a space, as one token: each round
    appends, for every word still split, the merge of its first two pieces (merges apply by rank, so a word's
    pieces depend on the other words' merges)."""
    if kind not in KINDS:
        raise ValueError(f"unknown tiny Qwen kind {kind!r}; kinds are {', '.join(KINDS)}")
    merges: list[tuple[str, str]] = [("Ċ", "Ċ")]
    spelled = [w for word in WORDS for w in (word, " " + word)]
    for _ in range(max(len(w) for w in spelled)):
        tokenizer = _bpe_tokenizer(kind, merges)
        split = [tokenizer.tokenize(w) for w in spelled]
        missing = list(dict.fromkeys((p[0], p[1]) for p in split if len(p) > 1))
        if not missing:
            break
        merges += [m for m in missing if m not in merges]
    else:
        raise AssertionError("slot_tokenizer: the merges did not converge")
    tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS)})
    tokenizer.add_tokens(list(THINK_TOKENS))
    tokenizer.chat_template = chat_template(kind)
    return tokenizer


def slot_processor(kind: str, tokenizer: Any, video: str = "first") -> Any:
    """The family's real processor around `tokenizer`: patch 4, merge 2, temporal patch 2, 4 frames per clip,
    16 x 16 frames kept at their size; its chat template is `chat_template(kind, video)`."""
    from transformers import (Qwen2VLImageProcessor, Qwen2VLProcessor, Qwen2VLVideoProcessor, Qwen3VLProcessor,
                              Qwen3VLVideoProcessor)

    image = Qwen2VLImageProcessor(patch_size=4, merge_size=2, temporal_patch_size=2,
                                  size={"shortest_edge": 64, "longest_edge": 1024})
    if kind == "qwen3_5":
        frames = Qwen3VLVideoProcessor(**PROCESSOR, size=dict(QWEN3_SIZE), num_frames=VIDEO_FRAMES, fps=None,
                                      do_sample_frames=True, cap_pixels_per_frame=False)
        return Qwen3VLProcessor(image_processor=image, tokenizer=tokenizer, video_processor=frames,
                                chat_template=chat_template(kind, video))
    frames = Qwen2VLVideoProcessor(**PROCESSOR, size=dict(QWEN2_SIZE), cap_pixels_per_frame=False)
    return Qwen2VLProcessor(image_processor=image, tokenizer=tokenizer, video_processor=frames,
                            chat_template=chat_template(kind, video))


def _vocab_size(tokenizer: Any) -> int:
    return (len(tokenizer) + 15) // 16 * 16  # embedding rows padded like the real vocabularies


def _token_ids(tokenizer: Any) -> dict[str, int]:
    return {name: tokenizer.convert_tokens_to_ids(token) for name, token in (
        ("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>"))}


def answer_model(size: QwenSize, tokenizer: Any, seed: int) -> Any:
    """`Qwen3_5ForConditionalGeneration` of `size` (full attention in every text layer), initialised from `seed`,
    float32, train mode."""
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration

    head_dim = size.hidden // size.heads
    text = {
        "vocab_size": _vocab_size(tokenizer), "hidden_size": size.hidden, "intermediate_size": 2 * size.hidden,
        "num_hidden_layers": size.layers, "layer_types": ["full_attention"] * size.layers,
        "num_attention_heads": size.heads, "num_key_value_heads": size.heads, "head_dim": head_dim,
        "max_position_embeddings": 1024, "pad_token_id": tokenizer.pad_token_id, "tie_word_embeddings": True,
        "initializer_range": size.init_std,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
                            "mrope_section": _mrope_section(head_dim // 4), "mrope_interleaved": True},
    }
    vision = {"patch_size": 4, "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3,
              "depth": size.vision_depth, "hidden_size": size.vision_hidden, "intermediate_size": 2 * size.vision_hidden,
              "num_heads": max(size.vision_hidden // 32, 1), "out_hidden_size": size.hidden,
              "num_position_embeddings": 16, "initializer_range": size.init_std}
    config = Qwen3_5Config(text_config=text, vision_config=vision, tie_word_embeddings=True,
                           initializer_range=size.init_std, **_token_ids(tokenizer))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Qwen3_5ForConditionalGeneration(config).to(torch.float32)


def scorer_model(size: QwenSize, tokenizer: Any, seed: int) -> Any:
    """`Qwen2VLForConditionalGeneration` of `size`, initialised from `seed`, float32, train mode."""
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    head_dim = size.hidden // size.heads
    text = {"vocab_size": _vocab_size(tokenizer), "hidden_size": size.hidden, "intermediate_size": 2 * size.hidden,
            "num_hidden_layers": size.layers, "num_attention_heads": size.heads, "num_key_value_heads": size.heads,
            "max_position_embeddings": 1024, "pad_token_id": tokenizer.pad_token_id, "bos_token_id": None,
            "eos_token_id": tokenizer.eos_token_id,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                "mrope_section": _mrope_section(head_dim // 2)}}
    vision = {"patch_size": 4, "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3,
              "depth": size.vision_depth, "embed_dim": size.vision_hidden, "hidden_size": size.hidden,
              "num_heads": max(size.vision_hidden // 32, 1), "mlp_ratio": 2}
    config = Qwen2VLConfig(text_config=text, vision_config=vision, **_token_ids(tokenizer))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Qwen2VLForConditionalGeneration(config).to(torch.float32)


def _mrope_section(half_rotary: int) -> list[int]:
    """M-RoPE's (time, height, width) split of `half_rotary` rotary frequencies, Qwen's 2:1:1 proportions."""
    t = half_rotary // 2
    h = (half_rotary - t) // 2
    return [t, h, half_rotary - t - h]
