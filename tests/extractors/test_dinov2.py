"""DINOv2 saliency extractor and the feature-map router on a tiny real Dinov2 checkpoint."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tvrl_bench import registry
from tvrl_bench.extractors.dinov2 import Dinov2Saliency, model_input_size
from tvrl_bench.credit.feature_map import FeatureMapRouter
from tvrl_bench.policies.hunyuan_loading import hunyuan_token_grid


def save_tiny_dinov2(folder, registers: int = 0, crop: int = 56):
    """A tiny DINOv2 (patch 14, 2 layers) with a DINOv2-style BitImageProcessor, saved with save_pretrained."""
    from transformers import BitImageProcessor, Dinov2Config, Dinov2Model, Dinov2WithRegistersConfig, Dinov2WithRegistersModel

    torch.manual_seed(0)
    common = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, mlp_ratio=2, image_size=crop, patch_size=14)
    if registers:
        model = Dinov2WithRegistersModel(Dinov2WithRegistersConfig(num_register_tokens=registers, **common))
    else:
        model = Dinov2Model(Dinov2Config(**common))
    model.save_pretrained(folder)
    BitImageProcessor(
        size={"shortest_edge": crop},
        crop_size={"height": crop, "width": crop},
        image_mean=[0.485, 0.456, 0.406],
        image_std=[0.229, 0.224, 0.225],
    ).save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def dino_path(tmp_path_factory):
    return save_tiny_dinov2(tmp_path_factory.mktemp("dinov2"))


def test_saliency_equals_cls_attention_of_the_processor_inputs(dino_path):
    """At the model's own size, the saliency is the CLS attention computed from BitImageProcessor's pixel values."""
    from transformers import AutoImageProcessor, Dinov2Model

    extractor = Dinov2Saliency(dino_path)
    assert extractor.short_side == 56 and extractor.patch == 14
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(3, 56, 56, 3), dtype=np.uint8)
    frames = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255
    processor = AutoImageProcessor.from_pretrained(dino_path)
    pixel_values = processor(images=list(images), return_tensors="pt")["pixel_values"]
    model = Dinov2Model.from_pretrained(dino_path, attn_implementation="eager")
    with torch.no_grad():
        attn = model(pixel_values=pixel_values, output_attentions=True).attentions[-1]
    expected = attn[:, :, 0, 1:].mean(dim=1).reshape(3, 4, 4)
    torch.testing.assert_close(extractor.patch_saliency(frames), expected, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("mode", ["cls_attention", "feature_norm"])
def test_saliency_shape_and_sign(dino_path, mode):
    extractor = Dinov2Saliency(dino_path, mode=mode, frames_per_batch=4)
    video = torch.rand(2, 5, 3, 40, 72)
    saliency = extractor(video)
    assert saliency.shape == (2, 5, 40, 72) and saliency.dtype == torch.float32
    assert (saliency >= 0).all() and saliency.std() > 0
    assert model_input_size(40, 72, 56, 14) == (56, 98)
    # frames are independent: a frame's saliency does not depend on the other frames in its batch
    torch.testing.assert_close(extractor(video[1:, 2:3]), saliency[1:, 2:3], atol=1e-5, rtol=1e-4)


def test_register_tokens_are_skipped(tmp_path):
    extractor = Dinov2Saliency(save_tiny_dinov2(tmp_path / "reg", registers=4))
    assert extractor.prefix_tokens == 5
    assert extractor(torch.rand(1, 2, 3, 56, 56)).shape == (1, 2, 56, 56)


def test_router_weights_on_the_policy_token_grid(dino_path):
    grid = hunyuan_token_grid(1, 1, 4, 16)  # HunyuanVideo-1.5: 4 frames x 16 x 16 pixels, causal first frame
    router = FeatureMapRouter(Dinov2Saliency(dino_path))
    video = torch.rand(2, 9, 3, 32, 48)
    weights = router(None, video, grid)
    assert weights.shape == (2, 3, 2, 3) == (2, *grid.grid_from_video((9, 32, 48)))
    torch.testing.assert_close(weights.mean(dim=(1, 2, 3)), torch.ones(2))
    assert (weights >= 0).all() and not weights.requires_grad


def test_preset_builds_the_router(dino_path):
    
    from tvrl_bench.config import load_config

    load_config(["components/credit/dinov2.gin"], [f'extractors.dinov2.path = "{dino_path}"'])
    router = registry.build("CREDIT")
    assert isinstance(router, FeatureMapRouter) and isinstance(router.extractor, Dinov2Saliency)
    assert router.extractor.mode == "cls_attention"


def test_bad_settings_are_named(dino_path, tmp_path):
    with pytest.raises(FileNotFoundError, match="extractors.dinov2.path"):
        Dinov2Saliency(str(tmp_path))
    with pytest.raises(ValueError, match="extractors.dinov2.mode"):
        Dinov2Saliency(dino_path, mode="pca")
    with pytest.raises(ValueError, match=r"video\[B, F, 3, H, W\]"):
        Dinov2Saliency(dino_path)(torch.rand(2, 3, 8, 8))
