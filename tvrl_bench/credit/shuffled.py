"""Shuffled credit (control): a window map whose values are randomly permuted over the tokens."""

from __future__ import annotations

import torch

from tvrl_bench.credit.window import WindowRouter
from tvrl_bench.registry import register


@register("credit", "shuffled")
class ShuffledRouter(WindowRouter):
    """Control: the k x k window map with its values permuted over each rollout's tokens (own seeded generator)."""

    def __init__(self, k: int = 3, seed: int = 0, combine: str = "mean"):
        super().__init__(k, combine)
        self.seed = seed
        self.generator = torch.Generator().manual_seed(seed)

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])

    def per_check(self, grads, video, grid, mask=None):
        """Each check's window map permuted by its own fresh permutation, [B, K, T', H', W']."""
        from tvrl_bench.credit.routing_grid import shuffle_maps

        return shuffle_maps(super().per_check(grads, video, grid, mask), self.generator)

    def __call__(self, grads, video, grid, mask=None):
        weights = super().__call__(grads, video, grid, mask)
        b = weights.shape[0]
        flat = weights.reshape(b, -1)
        order = torch.stack([torch.randperm(flat.shape[1], generator=self.generator) for _ in range(b)])
        return torch.gather(flat, 1, order.to(flat.device)).reshape(weights.shape)
