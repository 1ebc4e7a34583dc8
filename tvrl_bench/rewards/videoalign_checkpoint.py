"""Loading VideoAlign's VideoReward checkpoint: the released folder layout, PEFT / transformers-4.45 names mapped
to transformers 5's `Qwen2VLForConditionalGeneration`, LoRA merged, and the reward head (rewards/videoalign.py).

Checkpoint layout (the released KwaiVGI/VideoReward folder, `path`):

    model_config.json          data_config (fps, num_frames, max_frame_pixels, sample_type, eval_dim,
                               prompt_template_type), model_config (model_name_or_path, output_dim,
                               use_special_tokens, reward_token), peft_lora_config (lora_r, lora_alpha,
                               use_rslora), inference_config (VQ_mean, VQ_std, MQ_mean, MQ_std, TA_mean, TA_std)
    checkpoint-<step>/model.pth                    the whole PEFT-wrapped model's state dict (save_full_model), or
    checkpoint-<step>/adapter_model.safetensors    LoRA weights + non_lora_state_dict.pth (the other weights
                      non_lora_state_dict.pth      trained), applied on the base model
    checkpoint-<step>/tokenizer/                   the tokenizer with <|VQ_reward|> <|MQ_reward|> <|TA_reward|>

The base model (`base_path`, Qwen/Qwen2-VL-2B-Instruct: config, weights, processor files) gives the architecture,
the processor and the weights the LoRA checkpoint format leaves out. The state dict uses transformers-4.45 module
names (`visual.*`, `model.layers.*`) under PEFT's `base_model.model.` prefix; they are mapped to transformers 5's
`Qwen2VLForConditionalGeneration` names (`model.visual.*`, `model.language_model.*`) and every LoRA pair is merged
into its base weight, W + (lora_alpha / r) B A (alpha / sqrt(r) with rsLoRA). `rm_head` (Linear(hidden,
output_dim, bias=False)) becomes the critic's `head`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tvrl_bench.config.errors import ConfigError
from tvrl_bench.rewards.qwen.inputs import QwenInputs
from tvrl_bench.rewards.qwen.preprocess_video import QwenVLUtilsVideo
from tvrl_bench.rewards.videoalign_prompt import SPECIAL_TOKENS

_PEFT_PREFIX = "base_model.model."


def _read_model_config(folder: Path, param: str) -> dict[str, Any]:
    config_file = folder / "model_config.json"
    if not config_file.is_file():
        raise ValueError(
            f"{param}='{folder}' has no model_config.json: set it to the VideoReward checkpoint folder (e.g. "
            "`git clone https://huggingface.co/KwaiVGI/VideoReward /checkpoints/VideoReward`)"
        )
    config = json.loads(config_file.read_text())
    for section in ("data_config", "model_config"):
        if not isinstance(config.get(section), dict):
            raise ValueError(f"{config_file} has no '{section}' section")
    model_config, data_config = config["model_config"], config["data_config"]
    if not model_config.get("use_special_tokens") or model_config.get("reward_token") != "special":
        raise ValueError(f"{config_file}: model_config must have use_special_tokens=true and reward_token='special' "
                         "(this critic reads the three special reward tokens)")
    if data_config.get("prompt_template_type") != "detailed_special":
        raise ValueError(f"{config_file}: data_config.prompt_template_type="
                         f"'{data_config.get('prompt_template_type')}' is not supported (only 'detailed_special')")
    if data_config.get("sample_type", "uniform") != "uniform":
        raise ValueError(f"{config_file}: data_config.sample_type='{data_config['sample_type']}' is not supported "
                         "(only 'uniform')")
    return config


def find_checkpoint(folder: Path, step: int, param: str) -> Path:
    """The checkpoint-<step> subfolder; step -1: the latest (highest step), as the reference's loader."""
    found = {int(p.name.split("-")[-1]): p for p in folder.glob("checkpoint-*") if p.name.split("-")[-1].isdigit()}
    if not found:
        raise ValueError(f"{param}='{folder}' holds no checkpoint-<step> folder")
    if step == -1:
        return found[max(found)]
    if step not in found:
        raise ValueError(f"checkpoint_step={step} is not in '{folder}'; available steps: {sorted(found)}")
    return found[step]


def load_checkpoint_state(checkpoint: Path) -> dict[str, torch.Tensor]:
    """The checkpoint's tensors under their saved (PEFT, transformers-4.45) names: model.pth, or LoRA + non-LoRA."""
    full = checkpoint / "model.pth"
    if full.is_file():
        return torch.load(full, map_location="cpu", weights_only=True)
    lora, rest = checkpoint / "adapter_model.safetensors", checkpoint / "non_lora_state_dict.pth"
    if not (lora.is_file() and rest.is_file()):
        raise ValueError(f"'{checkpoint}' holds neither model.pth nor adapter_model.safetensors + "
                         "non_lora_state_dict.pth")
    from safetensors.torch import load_file

    state = dict(torch.load(rest, map_location="cpu", weights_only=True))
    state.update(load_file(lora))
    return state


def _current_name(legacy: str) -> str:
    """A transformers-4.45 Qwen2VLForConditionalGeneration parameter name -> its transformers-5 name."""
    if legacy.startswith("visual."):
        return "model." + legacy
    if legacy.startswith("model.") and not legacy.startswith(("model.language_model.", "model.visual.")):
        return "model.language_model." + legacy[len("model."):]
    return legacy


def merge_checkpoint_state(
    state: dict[str, torch.Tensor], lora_scaling: float
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], dict[str, tuple[torch.Tensor, torch.Tensor]]]:
    """Split a saved state dict into (plain weights by current name, head weights, LoRA pairs by current module).

    PEFT names: `<module>.base_layer.<w>` is the module's own weight; `<module>.lora_A[.default].weight` and
    `lora_B` the adapter. The returned LoRA pairs are (A, B) scaled so that the merged weight is W + B @ A.
    """
    plain, head, lora_a, lora_b = {}, {}, {}, {}
    for key, value in state.items():
        name = key[len(_PEFT_PREFIX):] if key.startswith(_PEFT_PREFIX) else key
        if name.startswith("rm_head."):
            head[name[len("rm_head."):]] = value
            continue
        for marker, store in ((".lora_A.", lora_a), (".lora_B.", lora_b)):
            if marker in name:
                store[_current_name(name.split(marker)[0])] = value
                break
        else:
            plain[_current_name(name.replace(".base_layer.", "."))] = value
    if set(lora_a) != set(lora_b):
        raise ValueError(f"the checkpoint's LoRA A and B weights do not pair up: {sorted(set(lora_a) ^ set(lora_b))}")
    pairs = {m: (lora_a[m].float(), lora_b[m].float() * lora_scaling) for m in lora_a}
    return plain, head, pairs


def _lora_scaling(peft_config: dict[str, Any]) -> float:
    r, alpha = float(peft_config.get("lora_r", 16)), float(peft_config.get("lora_alpha", 32))
    return alpha / math.sqrt(r) if peft_config.get("use_rslora") else alpha / r


def load_videoalign(
    path: str, base_path: str | None, checkpoint_step: int, inputs: QwenInputs
) -> tuple[Any, nn.Linear, Any, dict[str, Any]]:
    """(model, head, processor, model_config.json) from a VideoReward folder and its base Qwen2-VL folder, in
    `inputs`' dtype, on its device, with its attention backend."""
    import transformers

    folder = Path(path).expanduser()
    if not str(path) or not folder.is_dir():
        raise ConfigError(f"rewards.videoalign.path='{path}' is not a folder. Set it to a local copy of "
                          "KwaiVGI/VideoReward (model_config.json and checkpoint-<step>/)")
    config = _read_model_config(folder, "rewards.videoalign.path")
    base = base_path or config["model_config"].get("model_name_or_path")
    if not base or not Path(base).expanduser().is_dir():
        raise ConfigError(
            f"rewards.videoalign.base_path='{base}' is not a folder. Set it to a local copy of the base model "
            "Qwen/Qwen2-VL-2B-Instruct (config, weights, processor files)"
        )
    checkpoint = find_checkpoint(folder, checkpoint_step, "rewards.videoalign.path")

    base_processor = transformers.AutoProcessor.from_pretrained(base)
    tokenizer_folder = checkpoint / "tokenizer"
    tokenizer = (transformers.AutoTokenizer.from_pretrained(tokenizer_folder) if tokenizer_folder.is_dir()
                 else base_processor.tokenizer)
    if tokenizer.convert_tokens_to_ids(SPECIAL_TOKENS[0]) in (None, tokenizer.unk_token_id):
        tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS)})
    processor = transformers.Qwen2VLProcessor(
        image_processor=base_processor.image_processor,
        tokenizer=tokenizer,
        video_processor=base_processor.video_processor,
        chat_template=tokenizer.chat_template or base_processor.chat_template,
    )

    model = transformers.Qwen2VLForConditionalGeneration.from_pretrained(
        base, dtype=inputs.torch_dtype, attn_implementation=inputs.attn_implementation
    )
    model.resize_token_embeddings(len(tokenizer))
    plain, head_state, lora = merge_checkpoint_state(
        load_checkpoint_state(checkpoint), _lora_scaling(config.get("peft_lora_config", {}))
    )
    own = model.state_dict()
    unknown = sorted(set(plain) - set(own)) + sorted(f"{m}.weight" for m in lora if f"{m}.weight" not in own)
    if unknown:
        raise ValueError(f"'{checkpoint}' holds weights this Qwen2-VL model does not have: {unknown[:5]}")
    with torch.no_grad():
        for name, value in plain.items():
            if own[name].shape != value.shape:
                raise ValueError(f"'{checkpoint}': {name} has shape {tuple(value.shape)}, the model "
                                 f"{tuple(own[name].shape)}")
            own[name].copy_(value)
        for module, (a, b) in lora.items():
            weight = own[f"{module}.weight"]
            weight.copy_((weight.float() + b @ a).to(weight.dtype))
    if "weight" not in head_state:
        raise ValueError(f"'{checkpoint}' has no rm_head.weight (the reward head)")
    out_dim, hidden = head_state["weight"].shape
    head = nn.Linear(hidden, out_dim, bias=False, dtype=inputs.torch_dtype)
    head.load_state_dict(head_state)
    target = inputs.torch_device()
    return model.to(target).eval(), head.to(target), processor, config


def video_rules(config: dict[str, Any], inputs: QwenInputs, factor: int) -> QwenVLUtilsVideo:
    """The reference's vendored qwen-vl-utils rules (counts rounded to a multiple of 2) from model_config.json's
    data_config: `inputs.frames`, else `inputs.fps`, else data_config's num_frames or fps (2); per-frame pixels
    within [`inputs.min_pixels` or 128 x factor^2, `inputs.max_pixels` or data_config.max_frame_pixels]."""
    data = config["data_config"]
    frames, fps = inputs.frames, inputs.fps
    count = frames if frames is not None else (data.get("num_frames") if fps is None else None)
    rate = None if count is not None else (fps if fps is not None else float(data.get("fps") or 2.0))
    return QwenVLUtilsVideo(
        fps=rate, nframes=None if count is None else int(count), count_rounding="round", factor=factor,
        min_pixels=int(inputs.min_pixels) if inputs.min_pixels is not None else 128 * factor * factor,
        max_pixels=(int(inputs.max_pixels) if inputs.max_pixels is not None
                    else int(data.get("max_frame_pixels") or 200704)),
        total_pixels=None,
    )
