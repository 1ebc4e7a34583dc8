"""Reading a HunyuanVideo-1.5 folder: the token grid and the size checks made from the config files alone."""

from __future__ import annotations

import json

import pytest

from tvrl_bench.policies.hunyuan_loading import hunyuan_token_grid, pipeline_folder, read_sizes
from tvrl_bench.tokens import TokenGrid


def test_token_grid_scales_with_patch_and_compression():
    assert hunyuan_token_grid(1, 2, 4, 16) == TokenGrid((1, 2, 2), (4, 32, 32), True)
    assert hunyuan_token_grid(1, 1, 4, 8) == TokenGrid((1, 1, 1), (4, 8, 8), True)
    with pytest.raises(ValueError, match="patch_size_t"):
        hunyuan_token_grid(2, 1, 4, 16)


def config_folder(tmp_path, transformer: dict, vae: dict):
    """A folder with only model_index.json and the transformer and VAE configs (no weights)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "model_index.json").write_text("{}")
    for sub, config in (("transformer", transformer), ("vae", vae)):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "config.json").write_text(json.dumps(config))
    return tmp_path


def test_sizes_come_from_the_configs_before_any_weights(tmp_path):
    folder = config_folder(tmp_path, {"in_channels": 9, "patch_size": 2, "patch_size_t": 1}, {"latent_channels": 4})
    sizes = read_sizes(pipeline_folder(str(folder)), frames=9, height=64, width=96)
    assert (sizes.temporal_compression, sizes.spatial_compression, sizes.latent_channels) == (4, 16, 4)
    assert sizes.token_grid == hunyuan_token_grid(1, 2, 4, 16)
    with pytest.raises(ValueError, match="width=48 must be a positive multiple of 32"):
        read_sizes(folder, frames=9, height=64, width=48)
    with pytest.raises(ValueError, match="in_channels=9"):
        read_sizes(config_folder(tmp_path / "c8", {"in_channels": 9}, {"latent_channels": 8}), 9, 64, 64)


def test_missing_files_name_the_path_setting(tmp_path):
    with pytest.raises(FileNotFoundError, match="policies.hunyuan_video15.path.*no model_index.json"):
        pipeline_folder(str(tmp_path))
    (tmp_path / "model_index.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="no transformer/config.json"):
        read_sizes(tmp_path, 9, 32, 32)


def test_a_non_t2v_transformer_warns(tmp_path):
    folder = config_folder(tmp_path, {"in_channels": 9, "task_type": "i2v"}, {"latent_channels": 4})
    with pytest.warns(UserWarning, match="task_type is 'i2v'"):
        read_sizes(folder, 9, 32, 32)
