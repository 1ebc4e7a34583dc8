"""The toy policy: a tiny HunyuanVideo-1.5 transformer working directly in pixel space.

The same diffusers class as the real policy (`HunyuanVideo15Transformer3DModel`), loaded with `from_pretrained`
from a folder holding `transformer/` (diffusers format) and `text_encoder/` (a learned word embedding, see
toy_text.py). Latents are videos scaled to [-1, 1]: x[B, 3, F, H, W] = 2 video - 1, so decode is a rescale.
The network predicts the clean video x0 (TOYWORLD.md: an x0 target learns far faster per CPU minute than a
velocity target at this width), and the velocity is v = (x - x0_hat) / max(sigma, sigma_min).

`fast=True` (the default) runs the same modules and weights through `lean_forward`, which computes what
diffusers' forward computes for a text-to-video call without its overhead: no ByT5 or image tokens (diffusers
masks them out of every attention), no per-sample reordering loop, key-padding masks only where prompts have
padding, RoPE tables cached per latent shape. Its outputs equal diffusers' to float rounding (tests/policies);
docs/performance.md has the measurements.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

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
        fast: bool = True,
        train: tuple[str, ...] = (),
    ):
        """fast: run the transformer through `lean_forward` (same weights and result to float rounding) instead
        of diffusers' forward; False gives diffusers' own forward, the reference for the equivalence tests.
        train: name prefixes of the transformer parameters the optimizer updates (e.g. 'transformer_blocks',
        'norm_out'); empty trains every parameter that the toy policy uses."""
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
        self.fast = fast
        train = tuple(train)
        known = {name for name, _ in self.transformer.named_parameters()}
        for prefix in train:
            if not any(name.startswith(prefix) for name in known):
                raise ValueError(
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


# -- the lean forward --------------------------------------------------------------------------------------------
# What HunyuanVideo15Transformer3DModel.forward computes for a text-to-video call whose ByT5 and image inputs are
# masked out (as the toy policy's always are), written without the work that cannot change the result:
#   - the ByT5 projection (8 -> 2048 -> 2048 -> width per sample) and the image projection feed tokens that every
#     attention masks out, so they are skipped;
#   - the per-sample loop that moves valid text tokens first is a no-op for right-padded prompts;
#   - the [B, 1, S, S] pairwise masks become an additive key-padding bias [B, 1, 1, S], or none when no row has
#     padding (queries at padded text positions then hold unused values instead of zeros);
#   - RoPE's cos/sin tables are built once per latent shape, and the rotation of interleaved pairs is one flip.
# Every weight is used through the diffusers modules' own parameters, so the state dict and the gradients of the
# trained parameters are the same as diffusers' forward gives, to float rounding.


def lean_forward_applies(transformer: torch.nn.Module) -> bool:
    """Whether `lean_forward` computes what this transformer's forward would (plain text-to-video inference or
    training: no gradient checkpointing, adapters, meanflow or replaced attention processors)."""
    from diffusers.models.attention_processor import AttnProcessor2_0
    from diffusers.models.transformers.transformer_hunyuan_video15 import HunyuanVideo15AttnProcessor2_0

    if transformer.gradient_checkpointing or transformer.config.use_meanflow:
        return False
    if getattr(transformer, "_hf_peft_config_loaded", False):
        return False
    blocks_ok = all(type(b.attn.processor) is HunyuanVideo15AttnProcessor2_0 for b in transformer.transformer_blocks)
    refiner = transformer.context_embedder.token_refiner.refiner_blocks
    return blocks_ok and all(type(b.attn.processor) is AttnProcessor2_0 for b in refiner)


def rope_tables(transformer: torch.nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos[N, 1, Dh], signed_sin[N, 1, Dh]) for latents x[B, C, T, H, W], N = tokens, Dh = head width.

    diffusers rotates interleaved pairs: out = x cos + rot(x) sin with rot(x)[2i] = -x[2i+1], rot(x)[2i+1] = x[2i].
    With signed_sin[2i] = -sin[2i] that is x cos + swap(x) signed_sin, swap exchanging each pair (`_rotate`).
    """
    with torch.no_grad():
        cos, sin = transformer.rope(x)
        signed = sin.clone()
        signed[:, 0::2] = -signed[:, 0::2]
    return cos.to(x.dtype)[:, None], signed.to(x.dtype)[:, None]


def _rotate(x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """RoPE on x[B, N, heads, Dh] with the tables of `rope_tables`."""
    cos, signed_sin = rope
    swapped = x.unflatten(-1, (-1, 2)).flip(-1).flatten(-2)
    return torch.addcmul(x * cos, swapped, signed_sin)


def _key_bias(valid: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Additive attention bias [B, 1, 1, L]: 0 at valid keys, -inf at padding; valid[B, L] bool."""
    bias = torch.zeros(valid.shape, dtype=dtype, device=valid.device).masked_fill(~valid, float("-inf"))
    return bias[:, None, None, :]


def _project_heads(x: torch.Tensor, layers: tuple[torch.nn.Linear, ...], heads: int) -> list[torch.Tensor]:
    """Apply several Linear layers of the same input in one matmul: x[B, S, Din] -> each [B, S, heads, Dh]."""
    weight = torch.cat([layer.weight for layer in layers])
    bias = torch.cat([layer.bias for layer in layers])
    out = F.linear(x, weight, bias).unflatten(-1, (len(layers), heads, -1))
    return list(out.unbind(-3))


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """Scaled dot-product attention of q, k, v[B, S, heads, Dh] with bias[B, 1, 1, S] or None -> [B, S, heads * Dh]."""
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=bias)
    return out.transpose(1, 2).flatten(2)


def _refine_text(refiner: torch.nn.Module, text: torch.Tensor, timestep: torch.Tensor, valid: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """HunyuanVideo15TokenRefiner on text[B, L, Dtext] (valid[B, L] bool, bias as `_key_bias` or None) -> [B, L, W]."""
    weight = valid.to(text.dtype).unsqueeze(-1)
    pooled = (text * weight).sum(dim=1) / weight.sum(dim=1)
    temb = refiner.time_text_embed(timestep, pooled)
    x = refiner.proj_in(text)
    for block in refiner.token_refiner.refiner_blocks:
        attn = block.attn
        q, k, v = _project_heads(block.norm1(x), (attn.to_q, attn.to_k, attn.to_v), attn.heads)
        attended = attn.to_out[0](_attend(q, k, v, bias))
        gate_msa, gate_mlp = block.norm_out(temb)
        x = torch.addcmul(x, attended, gate_msa)
        x = torch.addcmul(x, block.ff(block.norm2(x)), gate_mlp)
    return x


def _modulation(norm: torch.nn.Module, act: torch.Tensor) -> list[torch.Tensor]:
    """AdaLayerNormZero's six [B, 1, W] modulations (shift, scale, gate of attention, then of the MLP); act = silu(temb)."""
    return list(norm.linear(act)[:, None].chunk(6, dim=-1))


def _block(block: torch.nn.Module, h: torch.Tensor, c: torch.Tensor, act: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], bias: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """One HunyuanVideo15TransformerBlock: video tokens h[B, N, W], text tokens c[B, L, W], act = silu(temb)[B, W],
    bias[B, 1, 1, N + L] or None; returns the updated (h, c)."""
    shift, scale, gate, shift_mlp, scale_mlp, gate_mlp = _modulation(block.norm1, act)
    c_shift, c_scale, c_gate, c_shift_mlp, c_scale_mlp, c_gate_mlp = _modulation(block.norm1_context, act)
    attn = block.attn
    nh = torch.addcmul(shift, block.norm1.norm(h), 1 + scale)
    nc = torch.addcmul(c_shift, block.norm1_context.norm(c), 1 + c_scale)
    q, k, v = _project_heads(nh, (attn.to_q, attn.to_k, attn.to_v), attn.heads)
    cq, ck, cv = _project_heads(nc, (attn.add_q_proj, attn.add_k_proj, attn.add_v_proj), attn.heads)
    dh = q.shape[-1]
    q = _rotate(F.rms_norm(q, (dh,), attn.norm_q.weight, attn.norm_q.eps), rope)
    k = _rotate(F.rms_norm(k, (dh,), attn.norm_k.weight, attn.norm_k.eps), rope)
    cq = F.rms_norm(cq, (dh,), attn.norm_added_q.weight, attn.norm_added_q.eps)
    ck = F.rms_norm(ck, (dh,), attn.norm_added_k.weight, attn.norm_added_k.eps)
    out = _attend(torch.cat([q, cq], 1), torch.cat([k, ck], 1), torch.cat([v, cv], 1), bias)
    n = h.shape[1]
    h = torch.addcmul(h, attn.to_out[0](out[:, :n]), gate)
    c = torch.addcmul(c, attn.to_add_out(out[:, n:]), c_gate)
    h = torch.addcmul(h, gate_mlp, block.ff(torch.addcmul(shift_mlp, block.norm2(h), 1 + scale_mlp)))
    c = torch.addcmul(c, c_gate_mlp, block.ff_context(torch.addcmul(c_shift_mlp, block.norm2_context(c), 1 + c_scale_mlp)))
    return h, c


def lean_forward(transformer: torch.nn.Module, x: torch.Tensor, timestep: torch.Tensor, text: torch.Tensor, mask: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """The transformer's output [B, C, T, H, W] for latents x[B, C, T, H, W], timestep[B] (sigma x 1000), text[B, L, D]
    with mask[B, L] (right-padded), and `rope_tables` for x's shape; see the comment above for what it leaves out."""
    b, _, t, height, width = x.shape
    config = transformer.config
    pt, p = config.patch_size_t, config.patch_size
    act = F.silu(transformer.time_embed(timestep))  # every AdaNorm of the blocks reads silu(temb)
    h = transformer.x_embedder(x)  # [B, N, W]
    valid = mask.bool()
    bias = None if bool(valid.all()) else _key_bias(valid, h.dtype)
    c = _refine_text(transformer.context_embedder, text, timestep, valid, bias) + transformer.cond_type_embed.weight[0]
    joint_bias = None if bias is None else F.pad(bias, (h.shape[1], 0))
    for block in transformer.transformer_blocks:
        h, c = _block(block, h, c, act, rope, joint_bias)
    norm_out = transformer.norm_out
    scale, shift = norm_out.linear(act)[:, None].chunk(2, dim=-1)
    h = transformer.proj_out(torch.addcmul(shift, norm_out.norm(h), 1 + scale))
    h = h.reshape(b, t // pt, height // p, width // p, -1, pt, p, p).permute(0, 4, 1, 5, 2, 6, 3, 7)
    return h.flatten(6, 7).flatten(4, 5).flatten(2, 3)
