"""A moving reference policy: a snapshot of the trainable parameters, swapped in for the KL's reference forward.

The official TVRL KL compares the policy with a reference reloaded from the policy every few optimizer steps
(`objectives/kl.py::RefreshSchedule`); the snapshot starts as the parameters at `bind` time (the initial policy).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch


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
