"""A critic's quality against the exact evaluator, from tensors: its agreement, its calibration, where its input
gradient lands. What the critic card (`tvrl-bench critic-card`) and the critic recipes' validation report.

- `yes_probability(scores, space)`: a critic's [B, K] scores on a 0-1 scale: exp(log p(Yes)) for 'log_prob'
  scores, p(Yes) itself for 'prob', and for 'score' (a head's value) the score clipped to the critic's declared
  `score_range` (a scalar scorer trained on the evaluator's overall declares (0, 1)); None where no 0-1 reading is
  declared.
- `agreement(p, passed)`: the share of pairs where p > 0.5 equals the evaluator's verdict.
- `expected_calibration_error(p, target, bins)`: sum over equal-width bins of p of (pairs in the bin / all) x
  |mean p - mean target|; target is the evaluator's verdict (0/1) for an answer-likelihood critic, its `overall`
  (a 0-1 share) for a scalar scorer.
- `mass_inside(maps, boxes)`: per map, the share of |gradient| mass inside a set of pixel boxes (the asked check's
  slot; for a scalar scorer, the slots whose checks fail).
"""

from __future__ import annotations

import torch

SPACES = ("log_prob", "prob", "score")


def yes_probability(scores: torch.Tensor, space: str, score_range: tuple[float, float] | None = None) -> torch.Tensor | None:
    """scores[...] on a 0-1 scale (see the module docstring); None for a 'score' critic without a (0, 1) range."""
    if space not in SPACES:
        raise ValueError(f"score space {space!r}: expected one of {SPACES}")
    if space == "log_prob":
        return scores.exp()
    if space == "prob":
        return scores.clamp(0, 1)
    if score_range is not None and tuple(score_range) == (0.0, 1.0):
        return scores.clamp(0, 1)
    return None


def agreement(p: torch.Tensor, passed: torch.Tensor) -> float:
    """Share of pairs where p[P] > 0.5 equals passed[P] (bool)."""
    if p.numel() == 0:
        return float("nan")
    return float(((p > 0.5) == passed.bool()).float().mean())


def expected_calibration_error(p: torch.Tensor, target: torch.Tensor, bins: int = 10) -> float:
    """ECE of p[P] in [0, 1] against target[P] in [0, 1] over `bins` equal-width bins of p."""
    if p.numel() == 0:
        return float("nan")
    p, target = p.flatten().float(), target.flatten().float()
    index = (p * bins).long().clamp(0, bins - 1)
    total = 0.0
    for b in range(bins):
        chosen = index == b
        if bool(chosen.any()):
            total += float(chosen.float().mean()) * abs(float(p[chosen].mean()) - float(target[chosen].mean()))
    return total


def box_mask(boxes: list[list[tuple[int, int, int, int]]], height: int, width: int) -> torch.Tensor:
    """bool[N, H, W]: per map n, the union of its boxes (x0, y0, x1, y1), exclusive ends."""
    mask = torch.zeros(len(boxes), height, width, dtype=torch.bool)
    for n, own in enumerate(boxes):
        for x0, y0, x1, y1 in own:
            mask[n, y0:y1, x0:x1] = True
    return mask


def mass_inside(maps: torch.Tensor, boxes: list[list[tuple[int, int, int, int]]]) -> torch.Tensor:
    """[N] share of maps[N, F, H, W] (|gradient|, >= 0) inside each map's boxes; NaN for a map with no mass."""
    mask = box_mask(boxes, maps.shape[-2], maps.shape[-1]).to(maps.device)
    total = maps.flatten(1).sum(1)
    inside = (maps * mask[:, None]).flatten(1).sum(1)
    return torch.where(total > 0, inside / total.clamp_min(1e-300), torch.full_like(total, float("nan")))
