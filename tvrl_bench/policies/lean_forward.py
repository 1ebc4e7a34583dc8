"""The lean forward of the HunyuanVideo-1.5 transformer for the toy policy's text-to-video calls.

One job: compute what diffusers' `HunyuanVideo15Transformer3DModel.forward` computes when the ByT5 and image
inputs are masked out (the toy policy's always are), through the same modules and weights but without the work
that cannot change the result (the comment below lists it). `lean_forward_applies` says when that holds. The toy
policy (toy.py) uses it when `policies.toy.fast` is on; outputs and gradients equal diffusers' forward to float
rounding (tests/policies/test_lean_forward.py), docs/performance.md has the measurements.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

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
