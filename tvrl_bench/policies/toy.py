"""The toy policy: a tiny HunyuanVideo-1.5 transformer working directly in pixel space.

The same diffusers class as the real policy (`HunyuanVideo15Transformer3DModel`), loaded with `from_pretrained`
from a folder holding `transformer/` (diffusers format) and `text_encoder/` (a learned word embedding, see
toy_text.py). Latents are videos scaled to [-1, 1]: x[B, 3, F, H, W] = 2 video - 1, so decode is a rescale.
The network predicts the clean video x0 (docs/toy/world.md: an x0 target learns far faster per CPU minute than a
velocity target at this width), and the velocity is v = (x - x0_hat) / max(sigma, sigma_min).

One job: the Policy methods (encode, velocity with CFG, decode) and the choice of trained parameters (`train`).
The checkpoint folder is read and written by toy_network.py, the text encoder is toy_text.py.

`fast=True` (the default) runs the same modules and weights through `lean_forward` (lean_forward.py), which
computes what diffusers' forward computes for a text-to-video call without its overhead: no ByT5 or image tokens
(diffusers masks them out of every attention), no per-sample reordering loop, key-padding masks only where prompts
have padding, RoPE tables cached per latent shape. Its outputs equal diffusers' to float rounding (tests/policies);
docs/performance.md has the measurements.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping

import torch

from tvrl_bench.policies.base import Policy
from tvrl_bench.policies.lean_forward import lean_forward, lean_forward_applies, rope_tables
from tvrl_bench.policies.toy_bases import SHIPPED_BASES, configured_world
from tvrl_bench.policies.toy_network import create_toy_network, load_toy_network, save_toy_network
from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.rules import Checks, one_of
from tvrl_bench.registry import register
from tvrl_bench.tokens import TokenGrid

from tvrl_bench.world.declaration import CheckpointWorld

DEFAULT_PATH = SHIPPED_BASES["v1"]
NUM_TRAIN_TIMESTEPS = 1000  # HunyuanVideo-1.5 feeds the transformer timestep = sigma * 1000

log = logging.getLogger("tvrl_bench.trial")


@register("policies", "toy")
class ToyPolicy(Policy):
    """Tiny HunyuanVideo-1.5 transformer in pixel space with a learned word-embedding text encoder."""

    CHECKS = Checks(base=one_of(*SHIPPED_BASES, note="the shipped bases"))
    worlds = None  # its world is its checkpoint's: `checkpoint_world`

    @staticmethod
    def checkpoint_world(values: Mapping[str, Any]) -> tuple[str, CheckpointWorld] | None:
        """(the parameter that chose the checkpoint, its world and video size) for a config's values of this
        policy: `path` when bound, else `base` (policies/toy_bases.py); None when the checkpoint does not say."""
        path = values.get("path")
        world = configured_world(values.get("base", "v1"), path)
        return None if world is None else ("path" if path else "base", world)

    def __init__(
        self,
        path: str | None = None,
        guidance: float = 3.0,
        frames: int = 8,
        height: int = 16,
        width: int = 16,
        sigma_min: float = 0.02,
        fast: bool = True,
        train: tuple[str, ...] = (),
        base: str = "v1",
    ):
        """path: a checkpoint folder (from `tvrl-bench prepare-toy --out`); None loads the shipped base `base`.
        base: which shipped base when path is None: 'v1' (2-frame tokens), 'v2' (4-frame tokens), 'v2_18k' (v2's
            recipe trained for 18,000 steps instead of 10,000), 'v2_noisy_captions' (v2_18k fine-tuned on captions
            with wrong colour words); the slot world's 'slots_clean' and 'slots' (slots_clean fine-tuned on captions
            whose slot colours are each wrong half the time); docs/toy/policy.md.
        fast: run the transformer through `lean_forward` (same weights and result to float rounding) instead
        of diffusers' forward; False gives diffusers' own forward, the reference for the equivalence tests.
        train: name prefixes of the transformer parameters the optimizer updates (e.g. 'transformer_blocks',
        'norm_out'); empty trains every parameter that the toy policy uses."""
        super().__init__()
        self.transformer, self.text_encoder = load_toy_network(Path(path) if path else SHIPPED_BASES[base])
        self.text_encoder.requires_grad_(False)
        # The ByT5 glyph and image branches of HunyuanVideo-1.5 get all-masked inputs here: never trained.
        self.transformer.context_embedder_2.requires_grad_(False)
        self.transformer.image_embedder.requires_grad_(False)
        self.eval()
        self.guidance = guidance
        self.frames, self.height, self.width = frames, height, width
        self.sigma_min = sigma_min
        self.fast = fast
        train = tuple(train)
        known = {name for name, _ in self.transformer.named_parameters()}
        for prefix in train:
            if not any(name.startswith(prefix) for name in known):
                raise ConfigError(
                    f"policies.toy.train: no transformer parameter starts with {prefix!r}; "
                    f"top-level modules are {sorted({n.split('.')[0] for n in known})}"
                )
        if train:  # frozen parameters need no weight gradients in the backward pass
            for name, p in self.transformer.named_parameters():
                if not name.startswith(train):
                    p.requires_grad_(False)
        self._rope_tables: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}
        config = self.transformer.config
        patch = (config.patch_size_t, config.patch_size, config.patch_size)
        self.token_grid = TokenGrid(latent_patch=patch, pixel_patch=patch)

    @classmethod
    def create(cls, folder: str | Path, vocabulary: list[str], seed: int = 0, **config: Any) -> Path:
        """Write a randomly initialised toy policy to `folder` (the starting point of pretraining); `config` goes
        to `toy_network.toy_transformer_config`."""
        return create_toy_network(folder, vocabulary, seed, **config)

    def save_pretrained(self, folder: str | Path) -> None:
        save_toy_network(folder, self.transformer, self.text_encoder)

    def prepare_for_sharding(self) -> None:
        """Switch the lean forward off: it reads block weights directly, which FSDP keeps sharded; diffusers'
        forward of the same modules and weights gathers them (same result to float rounding)."""
        if self.fast:
            self.fast = False
            log.info("training.sharding: policies.toy.fast is off under FSDP (the lean forward reads block weights "
                     "directly); the toy policy runs diffusers' forward of the same weights")

    def latent_shape(self) -> tuple[int, int, int, int]:
        return (3, self.frames, self.height, self.width)

    def encode(self, prompts: list[str]) -> dict[str, torch.Tensor]:
        """{'text': [B, L, D], 'mask': [B, L], 'null_text': [B, 1, D], 'null_mask': [B, 1]} (no gradient)."""
        with torch.no_grad():
            text, mask = self.text_encoder(list(prompts))
            null, null_mask = self.text_encoder([""] * len(prompts))
        return {"text": text, "mask": mask, "null_text": null, "null_mask": null_mask}

    def predict_x0(self, x: torch.Tensor, sigma: torch.Tensor, text: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The network's clean-video estimate x0_hat[B, 3, F, H, W] at noise levels sigma[B].

        text[B, L, D] and mask[B, L] (1 = token, right-padded) come from the text encoder.
        """
        timestep = sigma.to(x.device) * NUM_TRAIN_TIMESTEPS
        x = x.to(self.transformer.dtype)
        if self.fast and lean_forward_applies(self.transformer):
            return lean_forward(self.transformer, x, timestep, text, mask, self._rope(x)).to(torch.float32)
        b = x.shape[0]
        dim = self.transformer.config.image_embed_dim
        dim2 = self.transformer.config.text_embed_2_dim
        out = self.transformer(
            hidden_states=x,
            timestep=timestep,
            encoder_hidden_states=text,
            encoder_attention_mask=mask,
            encoder_hidden_states_2=x.new_zeros(b, 1, dim2),
            encoder_attention_mask_2=mask.new_zeros(b, 1),
            image_embeds=x.new_zeros(b, 1, dim),
        ).sample
        return out.to(torch.float32)

    def _rope(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The transformer's RoPE tables for latents shaped like x, computed once per shape (see `rope_tables`)."""
        key = (tuple(x.shape[2:]), x.device, x.dtype)
        if key not in self._rope_tables:
            self._rope_tables[key] = rope_tables(self.transformer, x)
        return self._rope_tables[key]

    def velocity(self, x: torch.Tensor, sigma: torch.Tensor, cond: dict[str, torch.Tensor]) -> torch.Tensor:
        """Guided velocity v[B, 3, F, H, W] = (x - x0_hat) / max(sigma, sigma_min); sigma[B]."""
        sigma = torch.as_tensor(sigma, dtype=torch.float32, device=x.device).expand(x.shape[0])
        if self.guidance == 1.0:
            x0 = self.predict_x0(x, sigma, cond["text"], cond["mask"])
        else:
            text, mask = _pad_cat(cond["null_text"], cond["null_mask"], cond["text"], cond["mask"])
            both = self.predict_x0(torch.cat([x, x]), torch.cat([sigma, sigma]), text, mask)
            uncond, conditional = both.chunk(2)
            x0 = uncond + self.guidance * (conditional - uncond)
        s = sigma.clamp_min(self.sigma_min).reshape(-1, 1, 1, 1, 1)
        return (x.to(torch.float32) - x0) / s

    def decode(self, x0: torch.Tensor) -> torch.Tensor:
        """video[B, F, 3, H, W] in [0, 1] from x0[B, 3, F, H, W] in [-1, 1]."""
        return ((x0.to(torch.float32) + 1) / 2).clamp(0, 1).permute(0, 2, 1, 3, 4)

    def named_trainable_parameters(self) -> list[tuple[str, torch.nn.Parameter]]:
        """The transformer's parameters that are not frozen: those under `train`'s prefixes (all it uses when
        `train` is empty), named relative to the transformer."""
        return [(name, p) for name, p in self.transformer.named_parameters() if p.requires_grad]


def _pad_cat(a: torch.Tensor, a_mask: torch.Tensor, b: torch.Tensor, b_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Concatenate two (embeddings[B, L, D], mask[B, L]) batches along B, right-padding to the longer L."""
    length = max(a.shape[1], b.shape[1])

    def pad(e: torch.Tensor, m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        extra = length - e.shape[1]
        return torch.nn.functional.pad(e, (0, 0, 0, extra)), torch.nn.functional.pad(m, (0, extra))

    (a, a_mask), (b, b_mask) = pad(a, a_mask), pad(b, b_mask)
    return torch.cat([a, b]), torch.cat([a_mask, b_mask])
