"""The reference policy of an objective's KL term (or a matching objective's old policy): what the trainer asks of it.

An objective with a KL term holds one in `Objective.reference` (None without a KL term). The trainer calls
`bind(parameters)` once before training, keeps the policy's own pretrained copy when `keeps_policy_copy`
(Policy.keep_reference), and computes the reference's transition mean inside `context(policy)`; its objective
calls `after_update` after each optimizer step and keeps `state_dict` in its own checkpoint state.

- `Reference`: the contract.
- `PretrainedReference`: the pretrained policy (the policy's own copy, adapters off).
- `SnapshotReference`: a copy of the trainable parameters (`MovingReference`) taken at `bind` time and swapped in
  by `context`. `RefreshedReference`, the official TVRL reference, reloads it from the policy every few optimizer
  steps (`objectives/kl.py::RefreshSchedule`); `MovingAverageReference`, DiffusionNFT's old policy, moves it toward
  the policy after every optimizer step (an exponential moving average).
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from typing import Any, ContextManager, Iterator

import torch

from tvrl_bench.objectives.kl import RefreshSchedule


class Reference:
    """The contract: `bind` the trainable parameters once, the policy's forward is the reference's inside
    `context(policy)`, and `keeps_policy_copy` says whether the policy must keep its own pretrained copy."""

    keeps_policy_copy: bool = False

    def bind(self, parameters: list[torch.nn.Parameter]) -> None:
        """The trainable parameters, given once before training."""

    def context(self, policy: Any) -> ContextManager:
        """A context in which policy.velocity is the reference's."""
        raise NotImplementedError

    def after_update(self, optimizer_steps: int) -> None:
        """Called after every optimizer step with the number of steps taken so far."""

    def state_dict(self) -> dict:
        """What a checkpoint must keep of the reference (nothing here)."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Restore what `state_dict` returned."""


class PretrainedReference(Reference):
    """The KL reference is the pretrained policy: the copy the policy keeps (Policy.reference)."""

    keeps_policy_copy = True  # the trainer has the policy keep it now, before any checkpoint is loaded

    def context(self, policy: Any) -> ContextManager:
        return policy.reference()


class SnapshotReference(Reference):
    """A copy of the trainable parameters, taken at `bind` (the initial policy) and swapped in by `context`; how it
    follows the policy afterwards is the subclass's `after_update`."""

    def __init__(self) -> None:
        self.moving: MovingReference | None = None

    def bind(self, parameters: list[torch.nn.Parameter]) -> None:
        """The snapshot starts as `parameters` (the initial policy)."""
        self.moving = MovingReference(parameters)

    def context(self, policy: Any) -> ContextManager:
        """The snapshot swapped into the parameters (before `bind`: the policy as it is)."""
        return nullcontext() if self.moving is None else self.moving.swapped()

    def state_dict(self) -> dict:
        """The snapshot's state once bound, else nothing."""
        return {} if self.moving is None else self.moving.state_dict()

    def load_state_dict(self, state: dict) -> None:
        """Restore the snapshot (bound: a reference not yet bound has nothing to restore into)."""
        if self.moving is not None and state:
            self.moving.load_state_dict(state)


class RefreshedReference(SnapshotReference):
    """A snapshot of the trainable parameters, reloaded from the policy after every `every`-th optimizer step."""

    def __init__(self, every: int = 10):
        super().__init__()
        self.schedule = RefreshSchedule(every)

    def after_update(self, optimizer_steps: int) -> None:
        """Reload the snapshot from the policy when the schedule says so after this many optimizer steps."""
        if self.moving is not None and self.schedule.due(optimizer_steps):
            self.moving.refresh()


class MovingAverageReference(SnapshotReference):
    """An exponential moving average of the trainable parameters (DiffusionNFT's slowly moving old policy):
    after every optimizer step, old <- decay * old + (1 - decay) * parameters; it starts as the initial policy."""

    def __init__(self, decay: float):
        super().__init__()
        if not 0.0 < decay < 1.0:
            raise ValueError(f"the moving average's decay must be in (0, 1), got {decay}")
        self.decay = decay

    def after_update(self, optimizer_steps: int) -> None:
        """old <- decay * old + (1 - decay) * parameters."""
        if self.moving is not None:
            with torch.no_grad():
                for old, p in zip(self.moving.snapshot, self.moving.parameters):
                    old.lerp_(p.detach(), 1.0 - self.decay)


class MovingReference:
    """Snapshot of `parameters` (detached copies on their devices) with `refresh` and a swap-in context."""

    def __init__(self, parameters: list[torch.nn.Parameter]):
        self.parameters = list(parameters)
        self.snapshot = [p.detach().clone() for p in self.parameters]

    def refresh(self) -> None:
        """The reference becomes the current parameters."""
        with torch.no_grad():
            for ref, p in zip(self.snapshot, self.parameters):
                ref.copy_(p)

    @contextmanager
    def swapped(self) -> Iterator[None]:
        """Within this context the parameters hold the reference's values (restored bit-exactly afterwards)."""
        current = [p.detach().clone() for p in self.parameters]
        with torch.no_grad():
            for p, ref in zip(self.parameters, self.snapshot):
                p.copy_(ref)
        try:
            yield
        finally:
            with torch.no_grad():
                for p, value in zip(self.parameters, current):
                    p.copy_(value)

    def state_dict(self) -> dict:
        return {"snapshot": [t.detach().cpu().clone() for t in self.snapshot]}

    def load_state_dict(self, state: dict) -> None:
        with torch.no_grad():
            for ref, saved in zip(self.snapshot, state["snapshot"]):
                ref.copy_(saved.to(ref.device))
