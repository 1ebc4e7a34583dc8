"""Loading a Qwen VL checkpoint folder: the class follows model_type, weights in the settings' dtype and device,
and errors that name the parameter and the fix."""

from __future__ import annotations

import json

import pytest
import torch

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.inputs import QwenInputs
from tvrl_bench.rewards.qwen.loading import load_qwen_vl


def test_a_tiny_checkpoint_loads_frozen_in_the_settings_dtype_and_device(tmp_path):
    folder = tiny_qwen.save_tiny_qwen(tmp_path / "qwen2_5_vl", "qwen2_5_vl")
    model, processor, model_type = load_qwen_vl(folder, QwenInputs(dtype="bfloat16", device="cpu"))
    assert model_type == "qwen2_5_vl" and type(model).__name__ == "Qwen2_5_VLForConditionalGeneration"
    assert not model.training and next(model.parameters()).dtype == torch.bfloat16
    assert next(model.parameters()).device == torch.device("cpu")
    assert type(processor).__name__ == "Qwen2_5_VLProcessor"


def test_bad_folders_name_the_parameter_and_the_fix(tmp_path):
    inputs = QwenInputs(device="cpu")
    with pytest.raises(ValueError, match=r"rewards\.x\.path='.*missing' is not a folder\. Set it to a local"):
        load_qwen_vl(tmp_path / "missing", inputs, param="rewards.x.path")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"rewards\.x\.path='.*empty' has no config\.json"):
        load_qwen_vl(tmp_path / "empty", inputs, param="rewards.x.path")
    (tmp_path / "bert").mkdir()
    (tmp_path / "bert" / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(ValueError, match=r"holds a 'bert' model; this critic loads qwen3_5, qwen3_vl"):
        load_qwen_vl(tmp_path / "bert", inputs, param="rewards.x.path")
