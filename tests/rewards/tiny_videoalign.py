"""A tiny VideoReward checkpoint in the released folder layout, from a tiny real Qwen2-VL (tests/rewards/tiny_qwen).

The reference trains `Qwen2VLRewardModelBT` (Qwen2VLForConditionalGeneration + `rm_head`) wrapped by PEFT LoRA and
saves the wrapped model's state dict with transformers-4.45 module names. This helper builds the same thing on the
tiny model: LoRA adapters injected by peft on the language model's linear layers (not the vision tower, lm_head,
rm_head or embeddings), the three special tokens added and their embedding rows trained (perturbed), a reward head,
then writes

    <root>/base/                         the tiny "Qwen2-VL-2B-Instruct" (tiny_qwen.save_tiny_qwen)
    <root>/reward/model_config.json
    <root>/reward/checkpoint-<step>/model.pth                 (fmt "full"), or
    <root>/reward/checkpoint-<step>/adapter_model.safetensors + non_lora_state_dict.pth   (fmt "lora")
    <root>/reward/checkpoint-<step>/tokenizer/

and returns the live PEFT model and head, for an independent computation of the rewards in the tests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tests.rewards import tiny_qwen

SPECIAL_TOKENS = ["<|VQ_reward|>", "<|MQ_reward|>", "<|TA_reward|>"]
STATS = {"VQ_mean": 0.3, "VQ_std": 2.0, "MQ_mean": -0.2, "MQ_std": 0.5, "TA_mean": 0.05, "TA_std": 4.0}
LORA_R, LORA_ALPHA = 4, 8


@dataclass
class TinyVideoAlign:
    reward_dir: Path
    base_dir: Path
    model: Any  # Qwen2VLForConditionalGeneration with live LoRA adapters (float32, eval)
    head: nn.Linear
    tokenizer: Any


def _legacy_name(name: str) -> str:
    """transformers-5 parameter name -> the transformers-4.45 name the reference's checkpoint holds."""
    if name.startswith("model.visual."):
        return name[len("model."):]
    if name.startswith("model.language_model."):
        return "model." + name[len("model.language_model."):]
    return name


def save_tiny_videoalign(
    root: str | Path, fmt: str = "full", step: int = 12, output_dim: int = 1, max_frame_pixels: int = 16 * 24,
    seed: int = 0, stats: dict[str, float] | None = STATS,
) -> TinyVideoAlign:
    """Write a tiny VideoReward folder (see the module docstring) and return the live reference model."""
    import transformers
    from peft import LoraConfig, inject_adapter_in_model

    root = Path(root)
    base = tiny_qwen.save_tiny_qwen(root / "base", "qwen2_vl", seed=seed)
    tokenizer = tiny_qwen.build_tokenizer("qwen2_vl")
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS})
    tokenizer.chat_template = tiny_qwen.CHAT_TEMPLATES["qwen2_vl"]

    model = transformers.Qwen2VLForConditionalGeneration.from_pretrained(base, dtype=torch.float32).eval()
    model.resize_token_embeddings(len(tokenizer))
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        embeddings = model.get_input_embeddings().weight
        ids = tokenizer.convert_tokens_to_ids(SPECIAL_TOKENS)
        embeddings[ids] = torch.randn(len(ids), embeddings.shape[1], generator=generator)
        merger = model.model.visual.merger.mlp[0].weight  # "tune_merger": trained outside LoRA
        merger.add_(0.05 * torch.randn(merger.shape, generator=generator))
    targets = sorted(
        name for name, module in model.named_modules()
        if isinstance(module, nn.Linear) and "language_model" in name and "lm_head" not in name
    )
    inject_adapter_in_model(LoraConfig(r=LORA_R, lora_alpha=LORA_ALPHA, target_modules=targets), model)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_" in name:
                param.copy_(0.3 * torch.randn(param.shape, generator=generator))
    head = nn.Linear(model.config.text_config.hidden_size, output_dim, bias=False)
    with torch.no_grad():
        head.weight.copy_(torch.randn(head.weight.shape, generator=generator))

    reward = root / "reward"
    checkpoint = reward / f"checkpoint-{step}"
    checkpoint.mkdir(parents=True, exist_ok=True)
    prefix = "base_model.model."
    state = {prefix + _legacy_name(k): v.detach().clone() for k, v in model.state_dict().items()}
    state[prefix + "rm_head.weight"] = head.weight.detach().clone()
    if fmt == "full":
        torch.save(state, checkpoint / "model.pth")
    elif fmt == "lora":
        from safetensors.torch import save_file

        # peft's save_pretrained drops the adapter name; the non-LoRA file holds the other trained weights.
        lora = {k.replace(".default", ""): v for k, v in state.items() if "lora_" in k}
        save_file(lora, checkpoint / "adapter_model.safetensors")
        trained = ("rm_head", "embed_tokens", "visual.merger")
        torch.save({k: v for k, v in state.items() if "lora_" not in k and any(t in k for t in trained)},
                   checkpoint / "non_lora_state_dict.pth")
    else:
        raise ValueError(f"fmt must be 'full' or 'lora', got '{fmt}'")
    tokenizer.save_pretrained(checkpoint / "tokenizer")

    config = {
        "data_config": {
            "max_frame_pixels": max_frame_pixels, "num_frames": None, "fps": 2.0, "p_shuffle_frames": 0.0,
            "p_color_jitter": 0.0, "eval_dim": ["VQ", "MQ", "TA"], "prompt_template_type": "detailed_special",
            "add_noise": False, "sample_type": "uniform", "use_tied_data": True,
        },
        "training_args": {"output_dir": str(reward)},
        "model_config": {
            "model_name_or_path": str(base), "output_dim": output_dim, "use_special_tokens": True,
            "reward_token": "special", "torch_dtype": "bfloat16",
        },
        "peft_lora_config": {
            "lora_enable": True, "vision_lora": False, "lora_r": LORA_R, "lora_alpha": LORA_ALPHA,
            "lora_dropout": 0.05, "lora_namespan_exclude": ["lm_head", "rm_head", "embed_tokens", "visual"],
            "lora_task_type": "CAUSAL_LM", "use_rslora": False, "num_lora_modules": -1,
        },
    }
    if stats is not None:
        config["inference_config"] = dict(stats)
    (reward / "model_config.json").write_text(json.dumps(config, indent=4))
    return TinyVideoAlign(reward, base, model, head, tokenizer)
