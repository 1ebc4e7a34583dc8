"""Tiny real Qwen VL checkpoints for tests: the real model, tokenizer and processor classes from tiny configs.

Nothing can be downloaded, so every piece is built here and written with `save_pretrained`, then loaded back by
the code under test exactly as a real checkpoint folder would be:

- a byte-level BPE tokenizer (the real `Qwen2Tokenizer` / `Qwen3_5Tokenizer` class; 256 byte tokens, a few merges
  such as "Yes" and "No", and Qwen's special tokens <|im_start|>, <|im_end|>, <|vision_start|>, <|vision_end|>,
  <|image_pad|>, <|video_pad|>, plus <think> / </think>);
- a chat template modelled on the family's real one (written here): Qwen2-VL / Qwen2.5-VL add a default system
  message, Qwen3-VL does not, Qwen3.5 opens an empty think block when `enable_thinking=False`;
- the family's real processor (`Qwen3VLProcessor` + `Qwen3VLVideoProcessor`, or `Qwen2_5_VLProcessor` /
  `Qwen2VLProcessor` + `Qwen2VLVideoProcessor`) with patch 4, merge 2, temporal patch 2 and a small pixel budget;
- the model (`Qwen3_5ForConditionalGeneration`, `Qwen3VLForConditionalGeneration`,
  `Qwen2_5_VLForConditionalGeneration`, `Qwen2VLForConditionalGeneration`) with hidden size 32, two text layers
  and a one- or two-block vision tower.

Use `save_tiny_qwen(folder, kind)`; reused by every Qwen-based critic's tests (VideoAlign, VideoScore2,
UnifiedReward, the answer-likelihood critic) and by tiny-config trials.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from tvrl_bench.recipes.slot_qwen_build import byte_symbols

KINDS = ("qwen3_5", "qwen3_vl", "qwen2_5_vl", "qwen2_vl")

SPECIAL_TOKENS = (
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
THINK_TOKENS = ("<think>", "</think>")
# Merges so that the usual answers are single tokens (like the real vocabularies), and a few more.
MERGES = (("Y", "e"), ("Ye", "s"), ("N", "o"), ("Ċ", "Ċ"), ("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "s"))
VOCAB_SIZE = 288  # model embedding rows: >= tokenizer size (256 bytes + merges + specials), like the real padding

# The small video processor every tiny checkpoint ships (factor = patch 4 * merge 2 = 8).
VIDEO_PROCESSOR = {
    "patch_size": 4,
    "temporal_patch_size": 2,
    "merge_size": 2,
    "min_frames": 4,
    "max_frames": 32,
}
QWEN3_SIZE = {"shortest_edge": 4 * 8 * 8, "longest_edge": 6 * 16 * 16}  # budget over all sampled frames
QWEN2_SIZE = {"shortest_edge": 8 * 8, "longest_edge": 16 * 24}  # budget per frame

# Chat templates written for the tests, modelled on the real ones (same text around messages and vision blocks).
_CONTENT = (
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for item in message['content'] -%}"
    "{%- if item['type'] == 'image' -%}{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}"
    "{%- elif item['type'] == 'video' -%}{{- '<|vision_start|><|video_pad|><|vision_end|>' -}}"
    "{%- elif item['type'] == 'text' -%}{{- item['text'] -}}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
)
QWEN2_VL_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if loop.first and message['role'] != 'system' -%}"
    "{{- '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' -}}{%- endif -%}"
    "{{- '<|im_start|>' + message['role'] + '\n' -}}" + _CONTENT + "{{- '<|im_end|>\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}"
)
QWEN3_VL_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\n' -}}" + _CONTENT + "{{- '<|im_end|>\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}"
)
QWEN3_5_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\n' -}}" + _CONTENT + "{{- '<|im_end|>\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}"
    "{%- if enable_thinking is defined and enable_thinking is false -%}{{- '<think>\n\n</think>\n\n' -}}"
    "{%- else -%}{{- '<think>\n' -}}{%- endif -%}{%- endif -%}"
)
CHAT_TEMPLATES = {
    "qwen3_5": QWEN3_5_TEMPLATE,
    "qwen3_vl": QWEN3_VL_TEMPLATE,
    "qwen2_5_vl": QWEN2_VL_TEMPLATE,
    "qwen2_vl": QWEN2_VL_TEMPLATE,
}


def build_tokenizer(kind: str = "qwen2_5_vl") -> Any:
    """A real byte-level BPE tokenizer of the Qwen classes, with Qwen's special tokens and a chat template."""
    from transformers import Qwen2Tokenizer
    from transformers.models.qwen3_5.tokenization_qwen3_5 import Qwen3_5Tokenizer

    symbols = byte_symbols()
    vocab = {symbols[b]: b for b in range(256)}
    for left, right in MERGES:
        vocab[left + right] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    cls = Qwen3_5Tokenizer if kind == "qwen3_5" else Qwen2Tokenizer
    tokenizer = cls(vocab=vocab, merges=list(MERGES), errors="replace")
    tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS)})
    tokenizer.add_tokens(list(THINK_TOKENS))
    tokenizer.chat_template = CHAT_TEMPLATES[kind]
    if len(tokenizer) > VOCAB_SIZE:
        raise AssertionError(f"tokenizer has {len(tokenizer)} tokens, more than VOCAB_SIZE={VOCAB_SIZE}")
    return tokenizer


def build_video_processor(kind: str, **overrides: Any) -> Any:
    """The family's real video processor with tiny settings (patch 4, merge 2, small pixel budget)."""
    from transformers import Qwen2VLVideoProcessor, Qwen3VLVideoProcessor

    if kind in ("qwen3_5", "qwen3_vl"):
        settings = {**VIDEO_PROCESSOR, "size": dict(QWEN3_SIZE), "fps": 2, "cap_pixels_per_frame": False}
        return Qwen3VLVideoProcessor(**{**settings, **overrides})
    settings = {**VIDEO_PROCESSOR, "size": dict(QWEN2_SIZE), "cap_pixels_per_frame": False}
    return Qwen2VLVideoProcessor(**{**settings, **overrides})


def build_processor(kind: str, tokenizer: Any | None = None, **video_overrides: Any) -> Any:
    """The family's real processor around the tiny tokenizer and video processor."""
    from transformers import Qwen2_5_VLProcessor, Qwen2VLImageProcessor, Qwen2VLProcessor, Qwen3VLProcessor

    tokenizer = tokenizer if tokenizer is not None else build_tokenizer(kind)
    image_processor = Qwen2VLImageProcessor(
        patch_size=4, merge_size=2, temporal_patch_size=2, size={"shortest_edge": 64, "longest_edge": 1024}
    )
    cls = {
        "qwen3_5": Qwen3VLProcessor,
        "qwen3_vl": Qwen3VLProcessor,
        "qwen2_5_vl": Qwen2_5_VLProcessor,
        "qwen2_vl": Qwen2VLProcessor,
    }[kind]
    return cls(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=build_video_processor(kind, **video_overrides),
        chat_template=CHAT_TEMPLATES[kind],
    )


def _token_ids(tokenizer: Any) -> dict[str, int]:
    ids = {name: tokenizer.convert_tokens_to_ids(tok) for name, tok in (
        ("image_token_id", "<|image_pad|>"),
        ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"),
        ("vision_end_token_id", "<|vision_end|>"),
    )}
    return ids


def build_config(kind: str, tokenizer: Any) -> Any:
    """A tiny config of the real model class: hidden 32, two text layers, a small vision tower (patch 4)."""
    from transformers import Qwen2_5_VLConfig, Qwen2VLConfig, Qwen3_5Config, Qwen3VLConfig

    ids = _token_ids(tokenizer)
    pad = tokenizer.pad_token_id
    vision_common = {"patch_size": 4, "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3}
    if kind == "qwen3_5":
        text = {
            "vocab_size": VOCAB_SIZE, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "layer_types": ["linear_attention", "full_attention"], "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 16, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
            "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_conv_kernel_dim": 4,
            "max_position_embeddings": 4096, "pad_token_id": pad,
            "rope_parameters": {
                "rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
                "mrope_section": [2, 1, 1], "mrope_interleaved": True,
            },
        }
        vision = {**vision_common, "depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                  "out_hidden_size": 32, "num_position_embeddings": 16}
        return Qwen3_5Config(text_config=text, vision_config=vision, **ids)
    if kind == "qwen3_vl":
        text = {
            "vocab_size": VOCAB_SIZE, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "max_position_embeddings": 4096,
            "pad_token_id": pad,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [4, 2, 2],
                                "mrope_interleaved": True},
        }
        vision = {**vision_common, "depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                  "out_hidden_size": 32, "num_position_embeddings": 16, "deepstack_visual_indexes": [0]}
        return Qwen3VLConfig(text_config=text, vision_config=vision, **ids)
    text = {
        "vocab_size": VOCAB_SIZE, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 4096, "pad_token_id": pad,
        "bos_token_id": None, "eos_token_id": tokenizer.eos_token_id,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [4, 2, 2]},
    }
    if kind == "qwen2_5_vl":
        vision = {**vision_common, "depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                  "out_hidden_size": 32, "window_size": 16, "fullatt_block_indexes": [1], "tokens_per_second": 2}
        return Qwen2_5_VLConfig(text_config=text, vision_config=vision, **ids)
    if kind == "qwen2_vl":
        vision = {**vision_common, "depth": 2, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2}
        return Qwen2VLConfig(text_config=text, vision_config=vision, **ids)
    raise ValueError(f"unknown tiny Qwen kind '{kind}' (kinds: {', '.join(KINDS)})")


def build_model(kind: str, tokenizer: Any, seed: int = 0) -> Any:
    """The real model class from the tiny config, randomly initialised with a fixed seed, float32, eval mode."""
    import transformers

    config = build_config(kind, tokenizer)
    cls = {
        "qwen3_5": transformers.Qwen3_5ForConditionalGeneration,
        "qwen3_vl": transformers.Qwen3VLForConditionalGeneration,
        "qwen2_5_vl": transformers.Qwen2_5_VLForConditionalGeneration,
        "qwen2_vl": transformers.Qwen2VLForConditionalGeneration,
    }[kind]
    torch.manual_seed(seed)
    return cls(config).to(torch.float32).eval()


def save_tiny_qwen(folder: str | Path, kind: str, seed: int = 0, **video_overrides: Any) -> Path:
    """Write a complete tiny checkpoint folder (model, tokenizer, processor, chat template) and return its path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(kind)
    processor = build_processor(kind, tokenizer, **video_overrides)
    model = build_model(kind, tokenizer, seed)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def build_critic(cls, path: str, **params):
    """`cls(path, inputs=QwenInputs(...), ...)` from one flat set of keyword arguments: those that are fields of
    the shared `rewards.qwen_inputs` settings go into `inputs`, the rest to the critic."""
    from tvrl_bench.rewards.qwen.inputs import FIELDS, QwenInputs

    inputs = QwenInputs(**{k: v for k, v in params.items() if k in FIELDS})
    return cls(path, inputs=inputs, **{k: v for k, v in params.items() if k not in FIELDS})
