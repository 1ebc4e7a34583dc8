"""The HunyuanVideo-1.5 policy's text conditioning: prompt embeddings and the conditioning dict built from them.

One job: run the pipeline's two text encoders on prompts as `HunyuanVideo15Pipeline` does (Qwen2.5-VL hidden
states, ByT5 glyph embeddings; `embed_prompts`), keep each prompt's valid tokens (`valid_tokens`), and lay
per-prompt tokens out as the batch-first, zero-padded conditioning dict that hunyuan_video15.py's `velocity`
reads (`conditioning`, `stack_with_negative`). The per-prompt cache is hunyuan_prompt_cache.py.
"""

from __future__ import annotations

import torch
from torch import nn

COND_KEYS = ("embeds", "mask", "embeds_2", "mask_2")


def embed_prompts(
    text_encoder: nn.Module,
    tokenizer,
    text_encoder_2: nn.Module,
    tokenizer_2,
    prompts: list[str],
    device: torch.device,
    text_max_length: int,
    byt5_max_length: int,
    prompt_template_crop: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(embeds[B, L, D], mask[B, L], embeds_2[B, L2, D2], mask_2[B, L2]) for B prompts, from the pipeline's own
    encoding functions: Qwen2.5-VL hidden states with `prompt_template_crop` chat-template tokens cut, and ByT5."""
    from diffusers import HunyuanVideo15Pipeline

    embeds, mask = HunyuanVideo15Pipeline._get_mllm_prompt_embeds(
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        prompt=prompts,
        device=device,
        tokenizer_max_length=text_max_length,
        crop_start=prompt_template_crop,
    )
    embeds_2, mask_2 = HunyuanVideo15Pipeline._get_byt5_prompt_embeds(
        tokenizer=tokenizer_2,
        text_encoder=text_encoder_2,
        prompt=prompts,
        device=device,
        tokenizer_max_length=byt5_max_length,
    )
    return embeds, mask, embeds_2, mask_2


def valid_tokens(embeds: torch.Tensor, mask: torch.Tensor, dtype: torch.dtype) -> list[torch.Tensor]:
    """Each row's valid tokens [L_i, D] (mask 1) of embeds[B, L, D], in `dtype`, as copies."""
    return [embeds[i][mask[i].bool()].to(dtype).clone() for i in range(embeds.shape[0])]


def pad_tokens(seqs: list[torch.Tensor], length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token embeddings seqs[i][L_i, D] with zeros to [B, length, D] and their mask [B, length] (long)."""
    dim = seqs[0].shape[-1]
    out = seqs[0].new_zeros(len(seqs), length, dim)
    mask = torch.zeros(len(seqs), length, dtype=torch.long, device=seqs[0].device)
    for i, s in enumerate(seqs):
        out[i, : s.shape[0]] = s
        mask[i, : s.shape[0]] = 1
    return out, mask


def pad_to(t: torch.Tensor, length: int) -> torch.Tensor:
    """Zero-pad dim 1 of t[B, L, ...] to `length`."""
    if t.shape[1] == length:
        return t
    pad = t.new_zeros(t.shape[0], length - t.shape[1], *t.shape[2:])
    return torch.cat([t, pad], dim=1)


def conditioning(
    pos: list[tuple[torch.Tensor, torch.Tensor]], neg: list[tuple[torch.Tensor, torch.Tensor]]
) -> dict[str, torch.Tensor]:
    """The conditioning dict of B prompts from their (Qwen tokens [L_i, D], ByT5 tokens [L2_i, D2]) in `pos` and
    the negative prompt's in `neg` (B entries): embeds[B, L, D], mask[B, L], embeds_2[B, L2, D2], mask_2[B, L2]
    and the same with the prefix neg_, zero-padded (mask 0) to the longest row of both (at least 1)."""
    length = max([1] + [e.shape[0] for e, _ in pos + neg])
    length_2 = max([1] + [e2.shape[0] for _, e2 in pos + neg])
    cond: dict[str, torch.Tensor] = {}
    for prefix, rows in (("", pos), ("neg_", neg)):
        embeds, mask = pad_tokens([e for e, _ in rows], length)
        embeds_2, mask_2 = pad_tokens([e2 for _, e2 in rows], length_2)
        for key, value in zip(COND_KEYS, (embeds, mask, embeds_2, mask_2)):
            cond[prefix + key] = value
    return cond


def stack_with_negative(cond: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """[cond; uncond] text inputs of batch 2B, padded to a common token length: for each key of COND_KEYS,
    cond[key][B, L, ...] and cond['neg_' + key][B, L', ...] -> [2B, max(L, L'), ...]."""
    out = {}
    for key in COND_KEYS:
        pos, neg = cond[key], cond[f"neg_{key}"]
        length = max(pos.shape[1], neg.shape[1])
        out[key] = torch.cat([pad_to(pos, length), pad_to(neg, length)], dim=0)
    return out
