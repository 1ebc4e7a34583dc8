"""One HunyuanVideo-1.5 transformer call as the text-to-video pipeline makes it (zero image conditioning)."""

from __future__ import annotations

import torch
from torch import nn


def t2v_forward(transformer: nn.Module, x: torch.Tensor, sigma: torch.Tensor, text: dict[str, torch.Tensor],
                dtype: torch.dtype, num_train_timesteps: int, vision_num_semantic_tokens: int,
                image_embed_dim: int) -> torch.Tensor:
    """The transformer's prediction [N, C, T, H, W] for latents x[N, C, T, H, W] at sigma[N], conditioned on
    `text` (embeds[N, L, D], mask[N, L], embeds_2[N, L2, D2], mask_2[N, L2]), computed in `dtype` on the
    transformer's device."""
    device = next(transformer.parameters()).device
    latents = x.to(device=device, dtype=dtype)
    n, _, t, h, w = latents.shape
    # t2v: zero condition latents and a zero mask channel, as prepare_cond_latents_and_mask builds them.
    cond_latents = torch.zeros_like(latents)
    cond_mask = latents.new_zeros(n, 1, t, h, w)
    model_input = torch.cat([latents, cond_latents, cond_mask], dim=1)
    image_embeds = latents.new_zeros(n, vision_num_semantic_tokens, image_embed_dim)
    # The pipeline's timestep: sigma * num_train_timesteps, cast to the latent dtype.
    timestep = (sigma.to(device=device, dtype=torch.float32) * num_train_timesteps).to(dtype)
    return transformer(
        hidden_states=model_input,
        timestep=timestep,
        encoder_hidden_states=text["embeds"].to(device=device, dtype=dtype),
        encoder_attention_mask=text["mask"].to(device),
        encoder_hidden_states_2=text["embeds_2"].to(device=device, dtype=dtype),
        encoder_attention_mask_2=text["mask_2"].to(device),
        image_embeds=image_embeds,
        return_dict=False,
    )[0]
