"""HunyuanVideo-1.5 text-to-video as a TVRL policy: diffusers' pipeline parts, LoRA through peft, batched CFG.

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
import json
import warnings
from pathlib import Path
from typing import Iterator

import torch
from torch import nn

from tvrl_bench.policies.base import Policy
from tvrl_bench.registry import register
from tvrl_bench.tokens import TokenGrid

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}

# The attention projections of the dual-stream blocks (video stream: to_*, text stream: add_*/to_add_out);
# to_q/to_k/to_v/to_out.0 also match the text token refiner's self-attention.
DEFAULT_LORA_TARGETS = ("to_q", "to_k", "to_v", "to_out.0", "add_q_proj", "add_k_proj", "add_v_proj", "to_add_out")

COND_KEYS = ("embeds", "mask", "embeds_2", "mask_2")


def hunyuan_token_grid(
    patch_size_t: int, patch_size: int, temporal_compression: int, spatial_compression: int
) -> TokenGrid:
    """The token grid of a HunyuanVideo-1.5 transformer over its causal VAE.

    A token is one transformer patch of (patch_size_t, patch_size, patch_size) latent positions; it covers
    (temporal_compression * patch_size_t, spatial_compression * patch_size, ...) pixels, and the first latent
    frame covers pixel frame 0 alone (causal VAE). HunyuanVideo-1.5: latent (1, 1, 1) -> pixels (4, 16, 16).
    """
    if patch_size_t != 1:
        raise ValueError(
            f"transformer patch_size_t={patch_size_t}: the causal VAE's first latent frame covers one pixel frame, "
            "so a token grid over several latent frames is not defined; HunyuanVideo-1.5 uses patch_size_t=1"
        )
    return TokenGrid(
        latent_patch=(patch_size_t, patch_size, patch_size),
        pixel_patch=(
            temporal_compression * patch_size_t,
            spatial_compression * patch_size,
            spatial_compression * patch_size,
        ),
        causal_first_frame=True,
    )


def _read_config(folder: Path, sub: str) -> dict:
    """The config.json of a pipeline component, with a clear error when it is missing."""
    path = folder / sub / "config.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"policies.hunyuan_video15.path='{folder}' has no {sub}/config.json: not a complete diffusers "
            "HunyuanVideo-1.5 folder"
        )
    return json.loads(path.read_text())


def _pad_tokens(seqs: list[torch.Tensor], length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token embeddings seqs[i][L_i, D] with zeros to [B, length, D] and their mask [B, length] (long)."""
    dim = seqs[0].shape[-1]
    out = seqs[0].new_zeros(len(seqs), length, dim)
    mask = torch.zeros(len(seqs), length, dtype=torch.long, device=seqs[0].device)
    for i, s in enumerate(seqs):
        out[i, : s.shape[0]] = s
        mask[i, : s.shape[0]] = 1
    return out, mask


def _pad_to(t: torch.Tensor, length: int) -> torch.Tensor:
    """Zero-pad dim 1 of t[B, L, ...] to `length`."""
    if t.shape[1] == length:
        return t
    pad = t.new_zeros(t.shape[0], length - t.shape[1], *t.shape[2:])
    return torch.cat([t, pad], dim=1)


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
        if dtype not in DTYPES:
            raise ValueError(f"policies.hunyuan_video15.dtype='{dtype}' is not one of {sorted(DTYPES)}")
        if lora_rank < 0:
            raise ValueError(f"policies.hunyuan_video15.lora_rank must be >= 0 (0: full fine-tuning), got {lora_rank}")
        self.full_finetune = lora_rank == 0
        if guidance_scale <= 0:
            raise ValueError(f"policies.hunyuan_video15.guidance_scale must be > 0, got {guidance_scale}")
        folder = Path(path).expanduser()
        if not (folder / "model_index.json").is_file():
            raise FileNotFoundError(
                f"policies.hunyuan_video15.path='{path}' is not a diffusers pipeline folder (no model_index.json). "
                "Set it to the diffusers-format HunyuanVideo-1.5 T2V checkpoint, e.g. a local copy of "
                "hunyuanvideo-community/HunyuanVideo-1.5-480p_t2v."
            )
        self.path = str(folder)
        self.frames, self.height, self.width = frames, height, width
        self.guidance_scale = float(guidance_scale)
        self.negative_prompt = negative_prompt
        self.torch_dtype = DTYPES[dtype]
        self.text_max_length = text_max_length
        self.byt5_max_length = byt5_max_length
        self.prompt_template_crop = prompt_template_crop
        self.text_encoder_offload = text_encoder_offload
        self.cache_hits = 0
        self.cache_misses = 0
        self._prompt_cache: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

        # Sizes are checked from the config files before the (large) weights load.
        transformer_config, vae_config = _read_config(folder, "transformer"), _read_config(folder, "vae")
        self.temporal_compression = int(vae_config.get("temporal_compression_ratio", 4))
        self.spatial_compression = int(vae_config.get("spatial_compression_ratio", 16))
        self.latent_channels = int(vae_config.get("latent_channels", 32))
        self._check_size(transformer_config)
        self.token_grid = hunyuan_token_grid(
            int(transformer_config.get("patch_size_t", 1)),
            int(transformer_config.get("patch_size", 1)),
            self.temporal_compression,
            self.spatial_compression,
        )
        if transformer_config.get("task_type", "t2v") != "t2v":
            warnings.warn(
                f"{folder}: transformer task_type is '{transformer_config['task_type']}'; this policy generates "
                "text-to-video (zero image conditioning). Use the T2V checkpoint.",
                stacklevel=2,
            )

        pipe = self._load_pipeline(folder)
        base = pipe.transformer
        self.vae = pipe.vae
        self.num_train_timesteps = int(pipe.scheduler.config.num_train_timesteps)
        self.scheduler_shift = float(pipe.scheduler.config.get("shift", 1.0))
        self.vision_num_semantic_tokens = int(pipe.vision_num_semantic_tokens)

        for module in (base, pipe.vae, pipe.text_encoder, pipe.text_encoder_2):
            module.requires_grad_(False)
            module.eval()
        if gradient_checkpointing:
            base.enable_gradient_checkpointing()
        if vae_slicing:
            self.vae.enable_slicing()
        if vae_tiling:
            self.vae.enable_tiling()
        if self.full_finetune:  # the official recipe: every transformer weight trains (needs FSDP at full size)
            self.transformer = base.requires_grad_(True)
        else:
            self.transformer = self._add_lora(base, lora_rank, lora_alpha, lora_targets, lora_dropout)
        self._base_transformer_config = base.config

        self.tokenizer, self.tokenizer_2 = pipe.tokenizer, pipe.tokenizer_2
        if text_encoder_offload:
            # Not registered as submodules, so `policy.to(device)` leaves them on the CPU.
            object.__setattr__(self, "_text_encoders", (pipe.text_encoder, pipe.text_encoder_2))
        else:
            self.text_encoder, self.text_encoder_2 = pipe.text_encoder, pipe.text_encoder_2
        if device is not None:
            self.to(device)

    # ----------------------------------------------------------------------------------------------- loading
    def _load_pipeline(self, folder: Path):
        from diffusers import HunyuanVideo15Pipeline

        try:
            return HunyuanVideo15Pipeline.from_pretrained(str(folder), dtype=self.torch_dtype)
        except (OSError, ValueError, TypeError) as err:
            raise type(err)(
                f"policies.hunyuan_video15.path='{folder}': could not load HunyuanVideo15Pipeline ({err}). The folder "
                "needs model_index.json and the transformer, vae, text_encoder, tokenizer, text_encoder_2, "
                "tokenizer_2, scheduler and guider subfolders written by diffusers' save_pretrained."
            ) from err

    def _check_size(self, transformer_config: dict) -> None:
        rt, rs = self.temporal_compression, self.spatial_compression
        p = int(transformer_config.get("patch_size", 1))
        in_channels = int(transformer_config.get("in_channels", 65))
        if in_channels != 2 * self.latent_channels + 1:
            raise ValueError(
                f"{self.path}: transformer in_channels={in_channels} but the t2v input is "
                f"[latent, condition latents, mask] = 2 x {self.latent_channels} + 1 channels for this VAE"
            )
        if self.frames < 1 or (self.frames - 1) % rt:
            raise ValueError(
                f"policies.hunyuan_video15.frames={self.frames}: the causal VAE needs {rt}k + 1 frames "
                f"(e.g. {rt * max((self.frames - 1) // rt, 1) + 1})"
            )
        for name, size in (("height", self.height), ("width", self.width)):
            if size < rs * p or size % (rs * p):
                raise ValueError(
                    f"policies.hunyuan_video15.{name}={size} must be a positive multiple of {rs * p} "
                    f"(VAE compression {rs} x transformer patch {p})"
                )

    @staticmethod
    def _add_lora(transformer, rank: int, alpha: float, targets, dropout: float):
        from peft import LoraConfig, get_peft_model

        names = {n.rsplit(".", 1)[-1] for n, _ in transformer.named_modules()} | {
            ".".join(n.rsplit(".", 2)[-2:]) for n, _ in transformer.named_modules() if n.count(".") >= 1
        }
        missing = [t for t in targets if t not in names]
        if missing:
            raise ValueError(
                f"policies.hunyuan_video15.lora_targets: {missing} match no module of the transformer; "
                f"use attention projection names such as {list(DEFAULT_LORA_TARGETS)}"
            )
        config = LoraConfig(
            r=rank, lora_alpha=alpha, lora_dropout=dropout, target_modules=list(targets), init_lora_weights=True
        )
        # LoRA weights are created in float32 (peft's autocast_adapter_dtype) even on a bf16 base model.
        return get_peft_model(transformer, config)

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
        named = list(self.transformer.named_parameters())
        if self.full_finetune:
            return named
        return [(n, p) for n, p in named if "lora_" in n]

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
        self._encode_uncached(list(dict.fromkeys([*prompts, self.negative_prompt])))
        pos = [self._cached(p) for p in prompts]
        neg = [self._cached(self.negative_prompt)] * len(prompts)
        length = max([1] + [e.shape[0] for e, _ in pos + neg])
        length_2 = max([1] + [e2.shape[0] for _, e2 in pos + neg])
        cond: dict[str, torch.Tensor] = {}
        for prefix, rows in (("", pos), ("neg_", neg)):
            embeds, mask = _pad_tokens([e for e, _ in rows], length)
            embeds_2, mask_2 = _pad_tokens([e2 for _, e2 in rows], length_2)
            for key, value in zip(COND_KEYS, (embeds, mask, embeds_2, mask_2)):
                cond[prefix + key] = value
        return cond

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
            text = self._stack_with_negative(cond)
        reps = 2 if guided else 1
        out = self._transformer_forward(x.repeat(reps, 1, 1, 1, 1), sigma.repeat(reps), text).to(torch.float32)
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

    def _cached(self, prompt: str) -> tuple[torch.Tensor, torch.Tensor]:
        """A cached prompt's (Qwen tokens [L, D], ByT5 tokens [L2, D2]), moved once to the policy's device."""
        embeds, embeds_2 = self._prompt_cache[prompt]
        if embeds.device != self.device:
            embeds, embeds_2 = embeds.to(self.device), embeds_2.to(self.device)
            self._prompt_cache[prompt] = (embeds, embeds_2)
        return embeds, embeds_2

    @torch.no_grad()
    def _encode_uncached(self, prompts: list[str]) -> None:
        """Run both text encoders on the prompts not in the cache (one batch) and cache their valid tokens."""
        from diffusers import HunyuanVideo15Pipeline

        todo = [p for p in prompts if p not in self._prompt_cache]
        self.cache_hits += len(prompts) - len(todo)
        self.cache_misses += len(todo)
        if not todo:
            return
        text_encoder, text_encoder_2 = self._encoders()
        device = self.device
        if self.text_encoder_offload:
            text_encoder.to(device)
            text_encoder_2.to(device)
        try:
            embeds, mask = HunyuanVideo15Pipeline._get_mllm_prompt_embeds(
                text_encoder=text_encoder,
                tokenizer=self.tokenizer,
                prompt=todo,
                device=device,
                tokenizer_max_length=self.text_max_length,
                crop_start=self.prompt_template_crop,
            )
            embeds_2, mask_2 = HunyuanVideo15Pipeline._get_byt5_prompt_embeds(
                tokenizer=self.tokenizer_2,
                text_encoder=text_encoder_2,
                prompt=todo,
                device=device,
                tokenizer_max_length=self.byt5_max_length,
            )
        finally:
            if self.text_encoder_offload:
                text_encoder.to("cpu")
                text_encoder_2.to("cpu")
        dtype = self.torch_dtype
        for i, p in enumerate(todo):
            self._prompt_cache[p] = (
                embeds[i][mask[i].bool()].to(dtype).clone(),
                embeds_2[i][mask_2[i].bool()].to(dtype).clone(),
            )

    @staticmethod
    def _stack_with_negative(cond: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """[cond; uncond] text inputs of batch 2B, padded to a common token length."""
        out = {}
        for key in COND_KEYS:
            pos, neg = cond[key], cond[f"neg_{key}"]
            length = max(pos.shape[1], neg.shape[1])
            out[key] = torch.cat([_pad_to(pos, length), _pad_to(neg, length)], dim=0)
        return out

    def _transformer_forward(self, x: torch.Tensor, sigma: torch.Tensor, text: dict[str, torch.Tensor]) -> torch.Tensor:
        """The transformer's prediction for latents x[N, C, T, H, W] at sigma[N], as the t2v pipeline calls it."""
        device, dtype = self.device, self.torch_dtype
        latents = x.to(device=device, dtype=dtype)
        n, _, t, h, w = latents.shape
        # t2v: zero condition latents and a zero mask channel, as prepare_cond_latents_and_mask builds them.
        cond_latents = torch.zeros_like(latents)
        cond_mask = latents.new_zeros(n, 1, t, h, w)
        model_input = torch.cat([latents, cond_latents, cond_mask], dim=1)
        image_dim = int(self._base_transformer_config.image_embed_dim)
        image_embeds = latents.new_zeros(n, self.vision_num_semantic_tokens, image_dim)
        # The pipeline's timestep: sigma * num_train_timesteps, cast to the latent dtype.
        timestep = (sigma.to(device=device, dtype=torch.float32) * self.num_train_timesteps).to(dtype)
        return self.transformer(
            hidden_states=model_input,
            timestep=timestep,
            encoder_hidden_states=text["embeds"].to(device=device, dtype=dtype),
            encoder_attention_mask=text["mask"].to(device),
            encoder_hidden_states_2=text["embeds_2"].to(device=device, dtype=dtype),
            encoder_attention_mask_2=text["mask_2"].to(device),
            image_embeds=image_embeds,
            return_dict=False,
        )[0]

    def extra_repr(self) -> str:
        return (
            f"path={self.path!r}, frames={self.frames}, size={self.height}x{self.width}, "
            f"guidance_scale={self.guidance_scale}, dtype={self.torch_dtype}"
        )
