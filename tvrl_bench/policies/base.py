"""The policy contract: a video generator trained by TVRL.

Shapes: latents x[B, C, T, H, W]; noise levels sigma[B] in [0, 1] (1 = pure noise); velocities v = dx/dsigma
with the flow-matching convention x_sigma = (1 - sigma) x0 + sigma noise, so x0 = x - sigma v; videos
[B, F, 3, H, W] in [0, 1].
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from typing import Any, Iterator

import torch
from torch import nn

from tvrl_bench.tokens import TokenGrid


class Policy(nn.Module, ABC):
    """A generator: prompts -> conditioning -> velocities over latents -> decoded videos."""

    token_grid: TokenGrid

    @abstractmethod
    def latent_shape(self) -> tuple[int, int, int, int]:
        """(C, T, H, W) of one latent at the configured video size."""

    @abstractmethod
    def encode(self, prompts: list[str]) -> Any:
        """Conditioning for B prompts: a tensor, or a dict/tuple of tensors, batch first (see `index_cond`)."""

    @abstractmethod
    def velocity(self, x: torch.Tensor, sigma: torch.Tensor, cond: Any) -> torch.Tensor:
        """v[B, C, T, H, W] for latents x[B, C, T, H, W] at noise levels sigma[B] (guidance included)."""

    @abstractmethod
    def decode(self, x0: torch.Tensor) -> torch.Tensor:
        """Videos [B, F, 3, H, W] in [0, 1] from clean latents x0[B, C, T, H, W]."""

    def named_trainable_parameters(self) -> list[tuple[str, nn.Parameter]]:
        """(name, parameter) of every parameter the optimizer updates (LoRA adapters for large policies)."""
        return [(n, p) for n, p in self.named_parameters() if p.requires_grad]

    def trainable_parameters(self) -> list[nn.Parameter]:
        """The parameters the optimizer updates, in the order of `named_trainable_parameters`."""
        return [p for _, p in self.named_trainable_parameters()]

    def keep_reference(self) -> None:
        """Take the trainable parameters as they are now as the KL reference. The trainer calls this before it
        loads a checkpoint, so a resumed trial keeps the pretrained policy as its reference."""
        self._reference_copy = [p.detach().clone() for p in self.trainable_parameters()]

    def prepare_for_sharding(self) -> None:
        """Get ready to be sharded by FSDP (training/parallel/sharding.py calls this once, before sharding).

        FSDP2 gathers a shard unit's parameters in the unit's forward pre-hook, so every unit must be reached
        through its module forward (`module(...)`); a policy whose forward reads unit weights directly switches
        that off here. The default does nothing: it calls its modules already.
        """

    @contextlib.contextmanager
    def reference(self) -> Iterator[None]:
        """Within this context `velocity` is the frozen reference policy's (for a KL term).

        The default swaps in the copy of the trainable parameters that `keep_reference` took (on first use if
        nobody called it).
        """
        params = self.trainable_parameters()
        if not hasattr(self, "_reference_copy"):
            self.keep_reference()
        current = [p.detach().clone() for p in params]
        with torch.no_grad():
            for p, ref in zip(params, self._reference_copy):
                p.copy_(ref)
        try:
            yield
        finally:
            with torch.no_grad():
                for p, cur in zip(params, current):
                    p.copy_(cur)


def index_cond(cond: Any, index: torch.Tensor | slice) -> Any:
    """Select rows of a conditioning structure (tensor, dict, list/tuple of them), batch first."""
    if isinstance(cond, torch.Tensor):
        return cond[index]
    if isinstance(cond, dict):
        return {k: index_cond(v, index) for k, v in cond.items()}
    if isinstance(cond, (list, tuple)):
        return type(cond)(index_cond(v, index) for v in cond)
    if cond is None:
        return None
    raise TypeError(f"cannot index conditioning of type {type(cond).__name__}")
