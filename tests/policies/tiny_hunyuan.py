"""Tiny HunyuanVideo-1.5 pipelines built from the real diffusers/transformers classes, for tests and smoke runs.

`save_tiny_hunyuan(folder)` writes a complete diffusers folder (model_index.json, transformer, vae, text_encoder
(Qwen2.5-VL text model), tokenizer (a real byte-level BPE Qwen2Tokenizer trained here with `tokenizers`),
text_encoder_2 (T5 encoder), tokenizer_2 (ByT5), scheduler, guider) that `HunyuanVideo15Pipeline.from_pretrained`
and the `policies.hunyuan_video15` component load. `TinyHunyuan.policy_kwargs` are the matching policy
parameters (small video, short text limits, small LoRA); `gin_bindings()` gives them as bindings for tvrl-train.

Shapes of the default tiny model: latent channels 4, VAE compression 4 x 16 x 16 (as the real one), transformer
1 block of 2 heads x 8 dims, patch 1; a 9-frame 32 x 32 video has latents [4, 3, 2, 2].
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TRAINING_TEXT = [
    "a red ball rolls to the left across a wooden table",
    "a cat walks on the grass, realistic",
    "two blue squares move up while the camera pans right",
    'a neon sign that says "open" flickers at night',
]


@dataclass
class TinyHunyuan:
    """Where a tiny pipeline was saved and the policy parameters that fit it."""

    path: str
    policy_kwargs: dict[str, Any] = field(default_factory=dict)

    def gin_bindings(self) -> list[str]:
        """`policies.hunyuan_video15.<name> = <value>` bindings for the tiny model (path included)."""
        values = {"path": self.path, **self.policy_kwargs}
        return [f"policies.hunyuan_video15.{k} = {v!r}" for k, v in values.items()]


def system_message() -> str:
    """The system prompt HunyuanVideo15Pipeline puts in front of every prompt (its own default)."""
    from diffusers import HunyuanVideo15Pipeline

    return inspect.signature(HunyuanVideo15Pipeline._get_mllm_prompt_embeds).parameters["system_message"].default


def build_qwen_tokenizer(vocab_size: int = 1000):
    """A real Qwen2Tokenizer: byte-level BPE trained on the system prompt and a few captions, Qwen chat tokens."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    bpe.train_from_iterator([system_message(), *TRAINING_TEXT], trainer)
    model = json.loads(bpe.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    tokenizer = Qwen2Tokenizer(vocab=model["vocab"], merges=merges)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def template_prefix_length(tokenizer) -> int:
    """Tokens before the user's text in the chat template (the pipeline's crop_start; 108 for the real tokenizer)."""
    prefix = f"<|im_start|>system\n{system_message()}<|im_end|>\n<|im_start|>user\n"
    return len(tokenizer(prefix, add_special_tokens=False)["input_ids"])


def build_tiny_pipeline(
    seed: int = 0,
    latent_channels: int = 4,
    heads: int = 2,
    head_dim: int = 8,
    layers: int = 1,
    patch_size: int = 1,
    text_dim: int = 16,
    byt5_dim: int = 8,
    guidance_scale: float = 6.0,
    shift: float = 5.0,
):
    """A HunyuanVideo15Pipeline of tiny real components (random weights, deterministic given seed)."""
    from diffusers import (
        AutoencoderKLHunyuanVideo15,
        FlowMatchEulerDiscreteScheduler,
        HunyuanVideo15Pipeline,
        HunyuanVideo15Transformer3DModel,
    )
    from diffusers.guiders import ClassifierFreeGuidance
    from transformers import ByT5Tokenizer, Qwen2_5_VLTextConfig, Qwen2_5_VLTextModel, T5Config, T5EncoderModel

    if head_dim % 4:
        raise ValueError(f"head_dim must be a multiple of 4 for the 3-axis RoPE, got {head_dim}")
    torch.manual_seed(seed)
    tokenizer = build_qwen_tokenizer()
    quarter = head_dim // 4
    transformer = HunyuanVideo15Transformer3DModel(
        in_channels=2 * latent_channels + 1,
        out_channels=latent_channels,
        num_attention_heads=heads,
        attention_head_dim=head_dim,
        num_layers=layers,
        num_refiner_layers=1,
        mlp_ratio=2.0,
        patch_size=patch_size,
        patch_size_t=1,
        text_embed_dim=text_dim,
        text_embed_2_dim=byt5_dim,
        image_embed_dim=8,
        rope_axes_dim=(quarter, quarter, head_dim - 2 * quarter),
        target_size=32,
        task_type="t2v",
    )
    vae = AutoencoderKLHunyuanVideo15(
        latent_channels=latent_channels,
        block_out_channels=(8, 8, 16, 16, 16),
        layers_per_block=1,
        spatial_compression_ratio=16,
        temporal_compression_ratio=4,
    )
    text_encoder = Qwen2_5_VLTextModel(
        Qwen2_5_VLTextConfig(
            vocab_size=len(tokenizer),
            hidden_size=text_dim,
            intermediate_size=2 * text_dim,
            num_hidden_layers=3,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=2048,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]},
            bos_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.pad_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
    )
    tokenizer_2 = ByT5Tokenizer()
    text_encoder_2 = T5EncoderModel(
        T5Config(vocab_size=len(tokenizer_2), d_model=byt5_dim, d_kv=4, d_ff=2 * byt5_dim, num_layers=1, num_heads=2)
    )
    return HunyuanVideo15Pipeline(
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        transformer=transformer,
        vae=vae,
        scheduler=FlowMatchEulerDiscreteScheduler(shift=shift),
        text_encoder_2=text_encoder_2,
        tokenizer_2=tokenizer_2,
        guider=ClassifierFreeGuidance(guidance_scale=guidance_scale),
    )


def save_tiny_hunyuan(folder: str | Path, seed: int = 0, **model_kwargs: Any) -> TinyHunyuan:
    """Save a tiny pipeline into `folder` (diffusers layout) and return its path and matching policy parameters."""
    folder = Path(folder)
    pipe = build_tiny_pipeline(seed=seed, **model_kwargs)
    pipe.save_pretrained(str(folder))
    kwargs = {
        "frames": 9,
        "height": 32,
        "width": 32,
        "guidance_scale": 4.5,
        "lora_rank": 4,
        "lora_alpha": 8.0,
        "dtype": "float32",
        "text_max_length": 48,
        "byt5_max_length": 32,
        "prompt_template_crop": template_prefix_length(pipe.tokenizer),
        "vae_tiling": False,
    }
    return TinyHunyuan(path=str(folder), policy_kwargs=kwargs)
