"""Loading a Qwen VL checkpoint (model and processor) from a local folder, frozen, in eval mode.

The model class follows the config's `model_type`: Qwen3.5 (`Qwen3_5ForConditionalGeneration`), Qwen3-VL
(`Qwen3VLForConditionalGeneration`), Qwen2.5-VL (`Qwen2_5_VLForConditionalGeneration`) or Qwen2-VL
(`Qwen2VLForConditionalGeneration`); the processor comes from `AutoProcessor`. Weights' dtype, device and attention
backend come from the critic's `QwenInputs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvrl_bench.config.errors import ConfigError
from tvrl_bench.rewards.qwen.inputs import QwenInputs

# config.model_type -> transformers class name
MODEL_CLASSES = {
    "qwen3_5": "Qwen3_5ForConditionalGeneration",
    "qwen3_vl": "Qwen3VLForConditionalGeneration",
    "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration",
    "qwen2_vl": "Qwen2VLForConditionalGeneration",
}


def load_qwen_vl(path: str | Path, inputs: QwenInputs, param: str = "path") -> tuple[Any, Any, str]:
    """(model, processor, model_type) from a local checkpoint folder; the model is in eval mode on the device.

    `param` names the gin parameter in error messages (e.g. 'rewards.qwen_vl.path').
    """
    import transformers

    folder = Path(path).expanduser()
    if not str(path) or not folder.is_dir():
        raise ConfigError(
            f"{param}='{path}' is not a folder. Set it to a local checkpoint folder (config.json, weights, "
            "tokenizer and processor files), e.g. downloaded with `huggingface-cli download Qwen/Qwen3.5-9B "
            "--local-dir /checkpoints/Qwen3.5-9B`."
        )
    if not (folder / "config.json").is_file():
        raise ConfigError(f"{param}='{path}' has no config.json: it is not a transformers checkpoint folder")
    config = transformers.AutoConfig.from_pretrained(folder)
    if config.model_type not in MODEL_CLASSES:
        raise ConfigError(
            f"{param}='{path}' holds a '{config.model_type}' model; this critic loads "
            f"{', '.join(MODEL_CLASSES)} (Qwen3.5, Qwen3-VL, Qwen2.5-VL, Qwen2-VL)"
        )
    model_class = getattr(transformers, MODEL_CLASSES[config.model_type])
    model = model_class.from_pretrained(
        folder, dtype=inputs.torch_dtype, attn_implementation=inputs.attn_implementation
    )
    processor = transformers.AutoProcessor.from_pretrained(folder)
    return model.to(inputs.torch_device()).eval(), processor, config.model_type
