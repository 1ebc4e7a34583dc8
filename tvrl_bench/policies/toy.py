"""The toy policy: a tiny HunyuanVideo-1.5 transformer working directly in pixel space.

The same diffusers class as the real policy (`HunyuanVideo15Transformer3DModel`), loaded with `from_pretrained`
from a folder holding `transformer/` (diffusers format) and `text_encoder/` (a learned word embedding, see
toy_text.py). Latents are videos scaled to [-1, 1]: x[B, 3, F, H, W] = 2 video - 1, so decode is a rescale.
The network predicts the clean video x0 (TOYWORLD.md: an x0 target learns far faster per CPU minute than a
velocity target at this width), and the velocity is v = (x - x0_hat) / max(sigma, sigma_min).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from tvrl_bench.policies.base import Policy
from tvrl_bench.policies.toy_text import ToyTextEncoder
from tvrl_bench.registry import register
from tvrl_bench.tokens import TokenGrid

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "assets" / "toy_policy"
NUM_TRAIN_TIMESTEPS = 1000  # HunyuanVideo-1.5 feeds the transformer timestep = sigma * 1000


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


@register("policies", "toy")
class ToyPolicy(Policy):
    """Tiny HunyuanVideo-1.5 transformer in pixel space with a learned word-embedding text encoder."""

    def __init__(
        self,
        path: str | None = None,
        guidance: float = 3.0,
        frames: int = 8,
        height: int = 16,
        width: int = 16,
        sigma_min: float = 0.02,
    ):
        super().__init__()
        from diffusers import HunyuanVideo15Transformer3DModel

        folder = Path(path) if path else DEFAULT_PATH
        if not (folder / "transformer" / "config.json").is_file():
            raise FileNotFoundError(
                f"policies.toy.path: no toy policy at {folder} (expected transformer/ and text_encoder/). "
                "Run `tvrl-bench prepare-toy` to build it, or point the path at a folder it wrote."
            )
        self.transformer = HunyuanVideo15Transformer3DModel.from_pretrained(folder / "transformer")
        self.text_encoder = ToyTextEncoder.from_pretrained(folder / "text_encoder")
        self.text_encoder.requires_grad_(False)
        # The ByT5 glyph and image branches of HunyuanVideo-1.5 get all-masked inputs here: never trained.
        self.transformer.context_embedder_2.requires_grad_(False)
        self.transformer.image_embedder.requires_grad_(False)
        self.eval()
        self.guidance = guidance
        self.frames, self.height, self.width = frames, height, width
        self.sigma_min = sigma_min
        config = self.transformer.config
        patch = (config.patch_size_t, config.patch_size, config.patch_size)
        self.token_grid = TokenGrid(latent_patch=patch, pixel_patch=patch)

    @classmethod
    def create(cls, folder: str | Path, vocabulary: list[str], seed: int = 0, **config: Any) -> Path:
        """Write a randomly initialised toy policy to `folder` (the starting point of pretraining)."""
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

    def save_pretrained(self, folder: str | Path) -> None:
        folder = Path(folder)
        self.transformer.save_pretrained(folder / "transformer")
        self.text_encoder.save_pretrained(folder / "text_encoder")

    def latent_shape(self) -> tuple[int, int, int, int]:
        return (3, self.frames, self.height, self.width)

    def encode(self, prompts: list[str]) -> dict[str, torch.Tensor]:
        """{'text': [B, L, D], 'mask': [B, L], 'null_text': [B, 1, D], 'null_mask': [B, 1]} (no gradient)."""
        with torch.no_grad():
            text, mask = self.text_encoder(list(prompts))
            null, null_mask = self.text_encoder([""] * len(prompts))
        return {"text": text, "mask": mask, "null_text": null, "null_mask": null_mask}

    def predict_x0(self, x: torch.Tensor, sigma: torch.Tensor, text: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The network's clean-video estimate x0_hat[B, 3, F, H, W] at noise levels sigma[B]."""
        b = x.shape[0]
        dim = self.transformer.config.image_embed_dim
        dim2 = self.transformer.config.text_embed_2_dim
        out = self.transformer(
            hidden_states=x.to(self.transformer.dtype),
            timestep=sigma.to(x.device) * NUM_TRAIN_TIMESTEPS,
            encoder_hidden_states=text,
            encoder_attention_mask=mask,
            encoder_hidden_states_2=x.new_zeros(b, 1, dim2),
            encoder_attention_mask_2=mask.new_zeros(b, 1),
            image_embeds=x.new_zeros(b, 1, dim),
        ).sample
        return out.to(torch.float32)

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

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        return [p for p in self.transformer.parameters() if p.requires_grad]


def _pad_cat(a: torch.Tensor, a_mask: torch.Tensor, b: torch.Tensor, b_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Concatenate two (embeddings[B, L, D], mask[B, L]) batches along B, right-padding to the longer L."""
    length = max(a.shape[1], b.shape[1])

    def pad(e: torch.Tensor, m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        extra = length - e.shape[1]
        return torch.nn.functional.pad(e, (0, 0, 0, extra)), torch.nn.functional.pad(m, (0, extra))

    (a, a_mask), (b, b_mask) = pad(a, a_mask), pad(b, b_mask)
    return torch.cat([a, b]), torch.cat([a_mask, b_mask])
