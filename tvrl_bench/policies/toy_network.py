"""The toy policy's networks on disk: build, save and load its checkpoint folder.

One job: the folder layout of a toy policy, `transformer/` (a real diffusers `HunyuanVideo15Transformer3DModel`,
tiny and text-to-video over RGB pixels, see `toy_transformer_config`) and `text_encoder/` (the learned word
embedding of toy_text.py). `create_toy_network` writes a randomly initialised one (the starting point of
pretraining), `load_toy_network` reads one back, `save_toy_network` writes trained ones. The policy that runs them
is toy.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from tvrl_bench.policies.toy_text import ToyTextEncoder


def toy_transformer_config(width: int = 64, heads: int = 2, layers: int = 3, patch: int = 2, patch_t: int = 2, text_dim: int = 64) -> dict[str, Any]:
    """A tiny text-to-video HunyuanVideo-1.5 transformer config over RGB pixels."""
    head_dim = width // heads
    spatial = (head_dim // 3) // 2 * 2
    temporal = head_dim - 2 * spatial
    return dict(
        in_channels=3,
        out_channels=3,
        num_attention_heads=heads,
        attention_head_dim=head_dim,
        num_layers=layers,
        num_refiner_layers=1,
        mlp_ratio=4.0,
        patch_size=patch,
        patch_size_t=patch_t,
        text_embed_dim=text_dim,
        text_embed_2_dim=8,
        image_embed_dim=8,
        rope_axes_dim=(temporal, spatial, spatial),
        task_type="t2v",
    )


def create_toy_network(folder: str | Path, vocabulary: list[str], seed: int = 0, **config: Any) -> Path:
    """Write a randomly initialised toy transformer (`toy_transformer_config(**config)`) and a text encoder over
    `vocabulary` to `folder`; returns the folder."""
    from diffusers import HunyuanVideo15Transformer3DModel

    torch.manual_seed(seed)
    transformer_config = toy_transformer_config(**config)
    transformer = HunyuanVideo15Transformer3DModel(**transformer_config)
    # The unused ByT5 branch is 4M of the parameters; zeros keep the shipped checkpoint small in git.
    with torch.no_grad():
        for p in transformer.context_embedder_2.parameters():
            p.zero_()
    folder = Path(folder)
    transformer.save_pretrained(folder / "transformer")
    ToyTextEncoder(vocabulary, transformer_config["text_embed_dim"]).save_pretrained(folder / "text_encoder")
    return folder


def load_toy_network(folder: Path) -> tuple[torch.nn.Module, ToyTextEncoder]:
    """(transformer, text encoder) from a toy policy folder; a clear error naming `policies.toy.path` without one."""
    from diffusers import HunyuanVideo15Transformer3DModel

    if not (folder / "transformer" / "config.json").is_file():
        raise FileNotFoundError(
            f"policies.toy.path: no toy policy at {folder} (expected transformer/ and text_encoder/). "
            "Run `tvrl-bench prepare-toy` to build it, or point the path at a folder it wrote."
        )
    transformer = HunyuanVideo15Transformer3DModel.from_pretrained(folder / "transformer")
    return transformer, ToyTextEncoder.from_pretrained(folder / "text_encoder")


def save_toy_network(folder: str | Path, transformer: torch.nn.Module, text_encoder: ToyTextEncoder) -> None:
    """Write a toy policy's transformer and text encoder to `folder` in the layout `load_toy_network` reads."""
    folder = Path(folder)
    transformer.save_pretrained(folder / "transformer")
    text_encoder.save_pretrained(folder / "text_encoder")
