"""`training.optimizer`: the trainer's optimizer and its settings; and the official recipe's optimizer, Muon for
2-D weight matrices (training/muon.py) with AdamW for every other parameter."""

from __future__ import annotations

from typing import Iterable

import torch

from tvrl_bench.config.rules import Checks, Rule, number, one_of, positive
from tvrl_bench.registry import register
from tvrl_bench.training.muon import Muon

__all__ = ["OPTIMIZER_KINDS", "MuonWithAdamW", "OptimizerChoice"]

OPTIMIZER_KINDS = ("adamw", "muon_adamw")


_BETA = number(0, 1, high_open=True, example="0.9")


def _betas(value) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == 2 and all(_BETA.test(b) for b in value)


class MuonWithAdamW:
    """Two torch optimizers behind one step / zero_grad / state_dict: Muon on matrices, AdamW on the rest.

    Both get the same learning rate and weight decay; `betas` are AdamW's. They have no defaults: OptimizerChoice
    passes `training.optimizer`'s (the official recipe's are in components/profiles/paper.gin).
    """

    def __init__(self, params: Iterable[torch.nn.Parameter], *, lr: float, weight_decay: float,
                 betas: tuple[float, float], momentum: float = 0.95):
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


@register("training", "optimizer")
class OptimizerChoice:
    """The trainer's optimizer: 'adamw' (ours) or 'muon_adamw' (official: Muon for matrices, AdamW for the rest).

    learning_rate and weight_decay apply to every parameter; betas are AdamW's. A trial that binds no
    `training.trial.optimizer` builds this class itself, so `training.optimizer.*` bindings apply either way.
    """

    CHECKS = Checks(
        kind=one_of(*OPTIMIZER_KINDS),
        learning_rate=positive("1e-4"),
        weight_decay=number(0, example="0.0"),
        betas=Rule(_betas, "two numbers in [0, 1)", "(0.9, 0.999)"),
    )

    def __init__(self, kind: str = "adamw", learning_rate: float = 1e-4, betas: tuple[float, float] = (0.9, 0.999),
                 weight_decay: float = 0.0):
        self.kind = kind
        self.learning_rate, self.weight_decay = learning_rate, weight_decay
        self.betas = tuple(betas)

    def build(self, parameters: list[torch.nn.Parameter]):
        """The optimizer over `parameters` with this choice's learning rate, AdamW betas and weight decay."""
        if self.kind == "muon_adamw":
            return MuonWithAdamW(parameters, lr=self.learning_rate, weight_decay=self.weight_decay, betas=self.betas)
        return torch.optim.AdamW(parameters, lr=self.learning_rate, betas=self.betas, weight_decay=self.weight_decay)
