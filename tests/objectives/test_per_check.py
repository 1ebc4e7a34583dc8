"""Per-check ratios and per-question advantages against loops written here."""

from __future__ import annotations

import math

import torch

from tvrl_bench.objectives.per_check import per_check_ratio_loss, question_advantages


def _loss_by_hand(new, old, adv, w, mask, eps):
    b, s, n = new.shape
    total = 0.0
    for i in range(b):
        for t in range(s):
            parts = []
            for k in range(w.shape[1]):
                if not mask[i, k]:
                    continue
                lw = sum(float(w[i, k, j]) * float(new[i, t, j] - old[i, t, j]) for j in range(n)) / n
                rho = math.exp(lw)
                a = float(adv[i]) if adv.dim() == 1 else float(adv[i, k])
                parts.append(-min(rho * a, min(max(rho, 1 - eps), 1 + eps) * a))
            total += sum(parts) / len(parts)
    return total / (b * s)


def test_per_check_loss_matches_the_loop_for_both_advantage_kinds():
    g = torch.Generator().manual_seed(0)
    new, old = torch.randn(3, 2, 6, generator=g, dtype=torch.float64) * 0.01, torch.zeros(3, 2, 6, dtype=torch.float64)
    w = torch.rand(3, 4, 6, generator=g, dtype=torch.float64)
    w = w / w.mean(dim=-1, keepdim=True)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
    for adv in (torch.randn(3, generator=g, dtype=torch.float64), torch.randn(3, 4, generator=g, dtype=torch.float64)):
        loss, stats = per_check_ratio_loss(new, old, adv, w, mask, clip_range=0.005)
        assert math.isclose(float(loss), _loss_by_hand(new, old, adv, w, mask, 0.005), rel_tol=1e-9)
        assert "clipfrac" in stats


def test_question_advantages_normalise_each_check_within_its_group():
    scores = torch.tensor([[1.0, 0.0], [3.0, 0.0], [2.0, 5.0], [6.0, 1.0]])
    groups = torch.tensor([0, 0, 1, 1])
    adv = question_advantages(scores, groups)
    torch.testing.assert_close(adv[:2, 0], torch.tensor([-1.0, 1.0]))
    torch.testing.assert_close(adv[:2, 1], torch.tensor([0.0, 0.0]))  # equal scores: std floored at 1e-6, centred 0
    torch.testing.assert_close(adv[2:, 1], torch.tensor([1.0, -1.0]))
