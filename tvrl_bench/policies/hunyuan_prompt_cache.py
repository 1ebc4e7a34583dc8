"""The HunyuanVideo-1.5 policy's prompt-embedding cache: each prompt's valid text tokens, computed once.

The text encoders are frozen, so a prompt's embeddings never change during a trial: `fill` runs both encoders on
the prompts not seen yet (one batch) and keeps each prompt's valid tokens; `get` hands them out on the device
asked for (moved there once). The encoders are passed in, not owned: the policy registers them as its submodules
(or keeps them on the CPU when offloaded), and the cache only holds tensors.
"""

from __future__ import annotations

import torch
from torch import nn

from tvrl_bench.policies.hunyuan_text import embed_prompts, valid_tokens


class PromptEmbeddingCache:
    """prompt -> (Qwen2.5-VL tokens [L, D], ByT5 tokens [L2, D2]) in `dtype`, with hit and miss counts."""

    def __init__(self, text_max_length: int, byt5_max_length: int, prompt_template_crop: int, dtype: torch.dtype):
        self.text_max_length = text_max_length
        self.byt5_max_length = byt5_max_length
        self.prompt_template_crop = prompt_template_crop
        self.dtype = dtype
        self.hits = 0
        self.misses = 0
        self._tokens: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

    def get(self, prompt: str, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """A cached prompt's (tokens [L, D], tokens_2 [L2, D2]) on `device` (moved there once)."""
        embeds, embeds_2 = self._tokens[prompt]
        if embeds.device != device:
            embeds, embeds_2 = embeds.to(device), embeds_2.to(device)
            self._tokens[prompt] = (embeds, embeds_2)
        return embeds, embeds_2

    @torch.no_grad()
    def fill(self, prompts: list[str], encoders: tuple[nn.Module, nn.Module], tokenizers: tuple, device: torch.device,
             offloaded: bool) -> None:
        """Encode the prompts not in the cache (one batch) with (Qwen2.5-VL, ByT5) `encoders` on `device`;
        offloaded encoders are moved there for the call and back to the CPU after it."""
        todo = [p for p in prompts if p not in self._tokens]
        self.hits += len(prompts) - len(todo)
        self.misses += len(todo)
        if not todo:
            return
        text_encoder, text_encoder_2 = encoders
        if offloaded:
            text_encoder.to(device)
            text_encoder_2.to(device)
        try:
            embeds, mask, embeds_2, mask_2 = embed_prompts(
                text_encoder, tokenizers[0], text_encoder_2, tokenizers[1], todo, device,
                self.text_max_length, self.byt5_max_length, self.prompt_template_crop,
            )
        finally:
            if offloaded:
                text_encoder.to("cpu")
                text_encoder_2.to("cpu")
        rows = zip(todo, valid_tokens(embeds, mask, self.dtype), valid_tokens(embeds_2, mask_2, self.dtype))
        for p, tokens, tokens_2 in rows:
            self._tokens[p] = (tokens, tokens_2)
