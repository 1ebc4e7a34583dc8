"""HunyuanVideo-1.5 text-to-video as a TVRL policy: diffusers' pipeline parts, LoRA through peft, batched CFG.

One job: the Policy methods (encode with a prompt cache, velocity with batched CFG, decode, the LoRA reference).
Reading the folder is hunyuan_loading.py, LoRA and the trainable parameters lora.py, the text encoders'
embeddings and the conditioning dict hunyuan_text.py, the per-prompt cache of those embeddings
hunyuan_prompt_cache.py, the transformer's t2v call hunyuan_forward.py.

Loaded from a diffusers-format folder (`model_index.json`, `transformer/`, `vae/`, `text_encoder/` (Qwen2.5-VL
text model), `tokenizer/`, `text_encoder_2/` (ByT5 encoder), `tokenizer_2/`, `scheduler/`, `guider/`), i.e. the
layout `HunyuanVideo15Pipeline.save_pretrained` writes.

Conventions, checked against diffusers 0.42.1's `HunyuanVideo15Pipeline` (see docs/real_models.md):
- Noise level and timestep: the pipeline's scheduler (`FlowMatchEulerDiscreteScheduler`) feeds the transformer
  `timestep = sigma * num_train_timesteps` (1000) cast to the latent dtype, so `velocity` does the same.
- Velocity sign: the scheduler steps `x_next = x + (sigma_next - sigma) * model_output`, so the transformer output
  is dx/dsigma = noise - x0 under x_sigma = (1 - sigma) x0 + sigma noise: exactly tvrl-bench's v, no sign flip.
- Text-to-video conditioning: the transformer takes 2C + 1 input channels, [latent, condition latents, mask];
  for t2v the pipeline sets the condition latents and the mask to zeros, and the image embeddings
  (`vision_num_semantic_tokens` x `image_embed_dim`) to zeros, which the transformer reads as "no image".
- Guidance: v = v_uncond + g (v_cond - v_uncond), diffusers' ClassifierFreeGuidance; the negative prompt is ""
  (the pipeline's default). Cond and uncond run as one batch of 2B.
- Latent shape for F frames of H x W pixels: (C, (F - 1) / r_t + 1, H / r_s, W / r_s) with the VAE's latent
  channels C and compression ratios r_t = 4, r_s = 16 (HunyuanVideo-1.5); F must be r_t k + 1.
- Decoding: latents / scaling_factor (plus shift_factor if the VAE config has one) -> VAE -> [-1, 1] -> [0, 1].
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch
from torch import nn

from tvrl_bench.policies.base import Policy
from tvrl_bench.policies.hunyuan_forward import t2v_forward
from tvrl_bench.policies.hunyuan_loading import DTYPES, load_pipeline, pipeline_folder, read_sizes
from tvrl_bench.policies.hunyuan_prompt_cache import PromptEmbeddingCache
from tvrl_bench.policies.hunyuan_text import COND_KEYS, conditioning, stack_with_negative
from tvrl_bench.policies.lora import DEFAULT_LORA_TARGETS, named_trainable, trainable_transformer
from tvrl_bench.config.rules import Checks, integer, one_of, positive
from tvrl_bench.registry import register


@register("policies", "hunyuan_video15")
class HunyuanVideo15Policy(Policy):
    """HunyuanVideo-1.5 T2V (diffusers) with LoRA adapters, classifier-free guidance and cached prompt embeddings.

    path: diffusers-format HunyuanVideo-1.5 T2V folder (e.g. HunyuanVideo-1.5 480p_t2v in diffusers layout).
    frames, height, width: video size of every rollout (frames = 4k + 1; height, width multiples of 16).
    guidance_scale: CFG scale g in v = v_uncond + g (v_cond - v_uncond); 1 runs the conditional model only.
    negative_prompt: the unconditional prompt ("" as in the pipeline).
    lora_rank, lora_alpha, lora_targets, lora_dropout: peft LoRA on the transformer's attention projections;
        lora_rank 0 trains every transformer weight instead (full fine-tuning, the official recipe).
    dtype: "bfloat16", "float16" or "float32" for every model (LoRA weights stay float32).
    gradient_checkpointing: recompute transformer blocks in the backward pass.
    vae_slicing: decode one video at a time (required for batch > 1 in diffusers 0.42, see decode).
    vae_tiling: decode in overlapping spatial tiles (less memory at 480p and above).
    text_max_length, byt5_max_length, prompt_template_crop: the pipeline's text limits (1000, 256) and the number
        of chat-template tokens cut from the Qwen2.5-VL hidden states (108 for the released tokenizer).
    text_encoder_offload: keep both text encoders on the CPU and move them to the policy's device only to encode
        prompts not yet cached (saves ~15 GB of GPU memory for the 7B Qwen2.5-VL text encoder).
    device: where to put the models after loading (None: leave them on the CPU for the trainer to move).
    """

    CHECKS = Checks(dtype=one_of(*sorted(DTYPES)), lora_rank=integer(0, example="32", note="0: full fine-tuning"),
                    guidance_scale=positive("6.0"))

    def __init__(
        self,
        path: str,
        frames: int = 33,
        height: int = 480,
        width: int = 848,
        guidance_scale: float = 6.0,
        negative_prompt: str = "",
        lora_rank: int = 32,
        lora_alpha: float = 64.0,
        lora_targets: tuple[str, ...] | list[str] = DEFAULT_LORA_TARGETS,
        lora_dropout: float = 0.0,
        dtype: str = "bfloat16",
        gradient_checkpointing: bool = True,
        vae_slicing: bool = True,
        vae_tiling: bool = True,
        text_max_length: int = 1000,
        byt5_max_length: int = 256,
        prompt_template_crop: int = 108,
        text_encoder_offload: bool = False,
        device: str | None = None,
    ):
        super().__init__()
        self.full_finetune = lora_rank == 0
        folder = pipeline_folder(path)
        self.path = str(folder)
        self.frames, self.height, self.width = frames, height, width
        self.guidance_scale = float(guidance_scale)
        self.negative_prompt = negative_prompt
        self.torch_dtype = DTYPES[dtype]
        self.text_max_length = text_max_length
        self.byt5_max_length = byt5_max_length
        self.prompt_template_crop = prompt_template_crop
        self.text_encoder_offload = text_encoder_offload
        self.prompt_cache = PromptEmbeddingCache(text_max_length, byt5_max_length, prompt_template_crop,
                                                 self.torch_dtype)

        # Sizes are checked from the config files before the (large) weights load.
        sizes = read_sizes(folder, frames, height, width)
        self.temporal_compression = sizes.temporal_compression
        self.spatial_compression = sizes.spatial_compression
        self.latent_channels = sizes.latent_channels
        self.token_grid = sizes.token_grid

        pipe = load_pipeline(folder, self.torch_dtype, gradient_checkpointing, vae_slicing, vae_tiling)
        base = pipe.transformer
        self.vae = pipe.vae
        self.num_train_timesteps = int(pipe.scheduler.config.num_train_timesteps)
        self.scheduler_shift = float(pipe.scheduler.config.get("shift", 1.0))
        self.vision_num_semantic_tokens = int(pipe.vision_num_semantic_tokens)
        self.transformer = trainable_transformer(base, lora_rank, lora_alpha, lora_targets, lora_dropout)
        self.image_embed_dim = int(base.config.image_embed_dim)

        self.tokenizer, self.tokenizer_2 = pipe.tokenizer, pipe.tokenizer_2
        if text_encoder_offload:
            # Not registered as submodules, so `policy.to(device)` leaves them on the CPU.
            object.__setattr__(self, "_text_encoders", (pipe.text_encoder, pipe.text_encoder_2))
        else:
            self.text_encoder, self.text_encoder_2 = pipe.text_encoder, pipe.text_encoder_2
        if device is not None:
            self.to(device)

    # ---------------------------------------------------------------------------------------------- contract
    @property
    def device(self) -> torch.device:
        return next(self.transformer.parameters()).device

    def latent_shape(self) -> tuple[int, int, int, int]:
        """(C, T, H, W) = (latent channels, (frames - 1) / 4 + 1, height / 16, width / 16) for HunyuanVideo-1.5."""
        return (
            self.latent_channels,
            (self.frames - 1) // self.temporal_compression + 1,
            self.height // self.spatial_compression,
            self.width // self.spatial_compression,
        )

    def named_trainable_parameters(self) -> list[tuple[str, nn.Parameter]]:
        """The LoRA adapter weights (everything else is frozen), or every transformer weight with lora_rank 0."""
        return named_trainable(self.transformer, self.full_finetune)

    def keep_reference(self) -> None:
        """With LoRA the reference is the base model (adapters off), so nothing is copied."""
        if self.full_finetune:
            super().keep_reference()

    @contextlib.contextmanager
    def reference(self) -> Iterator[None]:
        """The base model: LoRA adapters disabled (peft's disable_adapter) inside the context; with full
        fine-tuning, the copy of the weights `keep_reference` took, swapped in (Policy.reference)."""
        if self.full_finetune:
            with Policy.reference(self):
                yield
            return
        with self.transformer.disable_adapter():
            yield

    @property
    def cache_hits(self) -> int:
        return self.prompt_cache.hits

    @property
    def cache_misses(self) -> int:
        return self.prompt_cache.misses

    def train(self, mode: bool = True) -> "HunyuanVideo15Policy":
        super().train(mode)
        for module in (self.vae, *self._encoders()):
            module.eval()  # frozen models never switch to training behaviour
        return self

    def encode(self, prompts: list[str]) -> dict[str, torch.Tensor]:
        """Conditioning for B prompts, batch first, with the negative prompt's embeddings for CFG.

        Keys: embeds[B, L, D] and mask[B, L] (Qwen2.5-VL hidden states), embeds_2[B, L2, D2] and mask_2[B, L2]
        (ByT5 glyph embeddings), and neg_embeds, neg_mask, neg_embeds_2, neg_mask_2 (the negative prompt repeated
        B times). Only valid tokens are kept per prompt and rows are zero-padded (mask 0) to the longest in the
        call: the transformer masks padding out, so this equals the pipeline's fixed 1000/256-token padding
        while costing fewer tokens. Embeddings are cached per prompt string (the text encoders are frozen).
        """
        if isinstance(prompts, str):
            raise TypeError("encode expects a list of prompt strings, got a single string")
        device = self.device
        self.prompt_cache.fill(list(dict.fromkeys([*prompts, self.negative_prompt])), self._encoders(),
                               (self.tokenizer, self.tokenizer_2), device, self.text_encoder_offload)
        pos = [self.prompt_cache.get(p, device) for p in prompts]
        neg = [self.prompt_cache.get(self.negative_prompt, device)] * len(prompts)
        return conditioning(pos, neg)

    def velocity(self, x: torch.Tensor, sigma: torch.Tensor, cond: dict[str, torch.Tensor]) -> torch.Tensor:
        """Guided velocity v[B, C, T, H, W] (float32) = noise - x0 for latents x[B, C, T, H, W] at sigma[B].

        With guidance_scale g != 1, the conditional and unconditional predictions come from one batched forward
        of 2B samples and v = v_uncond + g (v_cond - v_uncond).
        """
        if x.ndim != 5 or x.shape[1] != self.latent_channels:
            raise ValueError(f"velocity expects latents [B, {self.latent_channels}, T, H, W], got {tuple(x.shape)}")
        b = x.shape[0]
        sigma = torch.as_tensor(sigma, dtype=torch.float32, device=x.device).reshape(-1).expand(b)
        guided = self.guidance_scale != 1.0
        text = {k: cond[k] for k in COND_KEYS}
        if guided:
            text = stack_with_negative(cond)
        reps = 2 if guided else 1
        out = t2v_forward(self.transformer, x.repeat(reps, 1, 1, 1, 1), sigma.repeat(reps), text, self.torch_dtype,
                          self.num_train_timesteps, self.vision_num_semantic_tokens,
                          self.image_embed_dim).to(torch.float32)
        if not guided:
            return out
        v_cond, v_uncond = out[:b], out[b:]
        return v_uncond + self.guidance_scale * (v_cond - v_uncond)

    def decode(self, x0: torch.Tensor) -> torch.Tensor:
        """Videos [B, F, 3, H, W] in [0, 1] (float32) from clean latents x0[B, C, T, H, W]; F = 4 (T - 1) + 1.

        diffusers 0.42's HunyuanVideo-1.5 VAE fails for batch > 1 without slicing: its causal attention mask
        [B, S, S] broadcasts against the queries [B, 1, S, C] to [B, B, S, C]. vae_slicing (default) decodes
        one video at a time.
        """
        scale = float(self.vae.config.scaling_factor)
        shift = self.vae.config.get("shift_factor", None)
        z = x0.to(device=self.vae.device, dtype=self.vae.dtype) / scale
        if shift is not None:
            z = z + float(shift)
        video = self.vae.decode(z, return_dict=False)[0]
        video = (video.to(torch.float32) / 2 + 0.5).clamp(0, 1)
        return video.permute(0, 2, 1, 3, 4)

    # ------------------------------------------------------------------------------------------------ helpers
    def _encoders(self) -> tuple[nn.Module, nn.Module]:
        if self.text_encoder_offload:
            return self._text_encoders
        return self.text_encoder, self.text_encoder_2

    def extra_repr(self) -> str:
        return (
            f"path={self.path!r}, frames={self.frames}, size={self.height}x{self.width}, "
            f"guidance_scale={self.guidance_scale}, dtype={self.torch_dtype}"
        )
