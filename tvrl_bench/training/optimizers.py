"""The official recipe's optimizer: Muon for 2-D weight matrices (training/muon.py), AdamW for every other parameter."""

from __future__ import annotations

from typing import Iterable

import torch

from tvrl_bench.registry import register
from tvrl_bench.training.muon import Muon


class MuonWithAdamW:
    """Two torch optimizers behind one step / zero_grad / state_dict: Muon on matrices, AdamW on the rest.

    Official settings: lr 1e-5 for both, weight decay 0.01, AdamW betas (0.95, 0.95).
    """

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float = 1e-5, weight_decay: float = 0.01,
                 betas: tuple[float, float] = (0.95, 0.95), momentum: float = 0.95):
        params = [p for p in params if p.requires_grad]
        matrices = [p for p in params if p.dim() == 2]
        others = [p for p in params if p.dim() != 2]
        self.optimizers: list[torch.optim.Optimizer] = []
        if matrices:
            self.optimizers.append(Muon(matrices, lr=lr, weight_decay=weight_decay, momentum=momentum))
        if others:
            self.optimizers.append(torch.optim.AdamW(others, lr=lr, betas=betas, weight_decay=weight_decay))

    @property
    def param_groups(self) -> list[dict]:
        return [g for o in self.optimizers for g in o.param_groups]

    def step(self) -> None:
        for o in self.optimizers:
            o.step()

    def zero_grad(self, set_to_none: bool = True) -> None:
        for o in self.optimizers:
            o.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> dict:
        return {"optimizers": [o.state_dict() for o in self.optimizers]}

    def load_state_dict(self, state: dict) -> None:
        for o, s in zip(self.optimizers, state["optimizers"]):
            o.load_state_dict(s)


OPTIMIZER_KINDS = ("adamw", "muon_adamw")


@register("training", "optimizer")
class OptimizerChoice:
    """The trainer's optimizer: 'adamw' (ours) or 'muon_adamw' (official: Muon for matrices, AdamW for the rest)."""

    def __init__(self, kind: str = "adamw"):
        if kind not in OPTIMIZER_KINDS:
            raise ValueError(f"training.optimizer.kind must be one of {OPTIMIZER_KINDS}, got '{kind}'")
        self.kind = kind

    def build(self, parameters: list[torch.nn.Parameter], learning_rate: float, betas: tuple[float, float],
              weight_decay: float):
        """The optimizer over `parameters` with the trial's learning rate, AdamW betas and weight decay."""
        if self.kind == "muon_adamw":
            return MuonWithAdamW(parameters, lr=learning_rate, weight_decay=weight_decay, betas=tuple(betas))
        return torch.optim.AdamW(parameters, lr=learning_rate, betas=tuple(betas), weight_decay=weight_decay)
