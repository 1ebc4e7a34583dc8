"""The toy policy's checkpoint folder: created, loaded back and saved in the same layout."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tvrl_bench.policies.toy_network import create_toy_network, load_toy_network, save_toy_network, toy_transformer_config


def test_create_load_save_round_trip(tmp_path):
    folder = create_toy_network(tmp_path / "a", ["red", "circle"], seed=0, width=32, layers=1)
    transformer, text_encoder = load_toy_network(folder)
    config = toy_transformer_config(width=32, layers=1)
    assert transformer.config.num_layers == 1 and tuple(transformer.config.rope_axes_dim) == config["rope_axes_dim"]
    assert not any(p.detach().any() for p in transformer.context_embedder_2.parameters())
    assert text_encoder.vocabulary[2:] == ["red", "circle"]
    save_toy_network(tmp_path / "b", transformer, text_encoder)
    again, again_text = load_toy_network(tmp_path / "b")
    for a, b in zip(transformer.state_dict().values(), again.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert again_text.vocabulary == text_encoder.vocabulary


def test_missing_folder_names_the_setting(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"policies\.toy\.path.*prepare-toy"):
        load_toy_network(Path(tmp_path))
