"""Located credit (positive control): each check's weight on the tokens where its object is drawn in the rollout.

Right by construction on the toy world, and blind to the critic. Each pixel takes the nearest colour of the world's
palette when it lies within `tolerance` (Euclidean RGB), the exact evaluator's first step; a check's object is then

    object, colour, motion checks: the pixels of the check's colour ("Is there a red circle?" -> red pixels)
    background check:              the pixels of the named background colour
    shape and count checks:        the pixels of any sprite colour (every object)
    slot checks (the slot world):  the slot's pixel box in every frame, whatever is drawn there

and the whole video where no pixel matches (the object is absent). The per-check pixel masks are pooled to tokens,
normalised to mean 1 and combined over the prompt's checks like any gradient map (credit/base.py).
"""

from __future__ import annotations

import copy

import torch

from tvrl_bench.config.rules import Checks, one_of, positive
from tvrl_bench.credit.base import COMBINE_MODES, GradientRouter
from tvrl_bench.registry import register
from tvrl_bench.world.checks import parse_check
from tvrl_bench.world.palette import ALL_COLOURS, SPRITE_COLOURS, palette_tensor
from tvrl_bench.world.slots import slot_box

_SPRITES = [ALL_COLOURS.index(name) for name in SPRITE_COLOURS]


def palette_labels(video: torch.Tensor, tolerance: float) -> torch.Tensor:
    """labels[B, F, H, W] (int64): the index into ALL_COLOURS of each pixel's nearest colour, -1 where none lies
    within `tolerance`. video[B, F, 3, H, W] in [0, 1]."""
    pixels = video.detach().to(torch.float32).movedim(2, -1)  # [B, F, H, W, 3]
    d2 = ((pixels[..., None, :] - palette_tensor(device=video.device)) ** 2).sum(-1)  # [B, F, H, W, C]
    nearest, index = d2.min(dim=-1)
    return torch.where(nearest <= tolerance**2, index, torch.full_like(index, -1))


def check_pixels(labels: torch.Tensor, check: str) -> torch.Tensor:
    """mask[F, H, W] (float, 0/1) of one check's object in one video's labels[F, H, W]; all ones when absent."""
    spec = parse_check(check)
    if spec.kind == "slot":
        x0, y0, x1, y1 = slot_box(spec.slot, *labels.shape[1:])
        found = torch.zeros_like(labels, dtype=torch.bool)
        found[:, y0:y1, x0:x1] = True
    elif spec.colour is not None:
        found = labels == ALL_COLOURS.index(spec.colour)
    elif spec.background is not None:
        found = labels == ALL_COLOURS.index(spec.background)
    else:
        found = torch.isin(labels, torch.tensor(_SPRITES, device=labels.device))
    return found.to(torch.float32) if found.any() else torch.ones_like(labels, dtype=torch.float32)


@register("credit", "located")
class LocatedRouter(GradientRouter):
    """Positive control: each check's credit on the tokens where its object is drawn, whole video where absent."""

    needs_grads = False
    worlds = ("slots", "sprites")  # it reads the toy checks' colour words and slot names
    world_parameters = {"sprites": ("tolerance",)}  # a slot check's map is its slot's box, whatever the colours
    needs_checks = True

    CHECKS = Checks(tolerance=positive("0.3"), combine=one_of(*COMBINE_MODES, note="how a rollout's checks' maps become one"))

    def __init__(self, tolerance: float = 0.3, combine: str = "mean"):
        super().__init__(combine)
        self.tolerance = tolerance
        self.checks: list[list[str]] | None = None  # checks[B][k] of the step being routed (given_checks)

    def given_checks(self, checks: list[list[str]]) -> LocatedRouter:
        bound = copy.copy(self)
        bound.checks = checks
        return bound

    def masks(self, video: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """Per-check pixel masks [B, K, F, H, W] of this step's checks (K = mask's width or the most checks);
        a padded check's mask is all ones (combine leaves it out)."""
        if self.checks is None:
            raise ValueError("LocatedRouter locates each check's object, so it needs the step's checks: route it "
                             "with credit.weights.route(..., checks=...)")
        labels = palette_labels(video, self.tolerance)  # [B, F, H, W]
        k = mask.shape[1] if mask is not None else max(len(c) for c in self.checks)
        out = torch.ones(labels.shape[0], k, *labels.shape[1:], device=video.device)
        for b, checks in enumerate(self.checks):
            for j, check in enumerate(checks[:k]):
                out[b, j] = check_pixels(labels[b], check)
        return out

    def per_check(self, grads, video, grid, mask=None):
        return super().per_check(self.masks(video, mask), video, grid, mask)

    def __call__(self, grads, video, grid, mask=None):
        return super().__call__(self.masks(video, mask), video, grid, mask)
