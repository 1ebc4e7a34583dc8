"""LoRA and trainable-parameter selection for the HunyuanVideo-1.5 policy's transformer.

One job: make the (frozen) transformer trainable as `policies.hunyuan_video15.lora_rank` says, with peft LoRA
adapters on named attention projections (rank > 0, the base weights stay frozen) or every weight (rank 0: full
fine-tuning, the official recipe), and name the parameters the optimizer then updates.
"""

from __future__ import annotations

from torch import nn

# The attention projections of the dual-stream blocks (video stream: to_*, text stream: add_*/to_add_out);
# to_q/to_k/to_v/to_out.0 also match the text token refiner's self-attention.
DEFAULT_LORA_TARGETS = ("to_q", "to_k", "to_v", "to_out.0", "add_q_proj", "add_k_proj", "add_v_proj", "to_add_out")


def add_lora(transformer: nn.Module, rank: int, alpha: float, targets, dropout: float) -> nn.Module:
    """The transformer wrapped by peft with LoRA adapters (float32 weights, lora_B = 0) on the modules whose name
    ends in one of `targets`; an error naming `lora_targets` when a target matches no module."""
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


def trainable_transformer(base: nn.Module, rank: int, alpha: float, targets, dropout: float) -> nn.Module:
    """rank 0: `base` itself with every weight trainable (full fine-tuning, needs FSDP at full size); otherwise
    `base` with LoRA adapters (`add_lora`)."""
    if rank == 0:
        return base.requires_grad_(True)
    return add_lora(base, rank, alpha, targets, dropout)


def named_trainable(transformer: nn.Module, full_finetune: bool) -> list[tuple[str, nn.Parameter]]:
    """(name, parameter) the optimizer updates: the LoRA adapter weights, or every weight with full fine-tuning."""
    named = list(transformer.named_parameters())
    if full_finetune:
        return named
    return [(n, p) for n, p in named if "lora_" in n]
