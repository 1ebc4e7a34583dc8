"""Muon on matrices + AdamW on the rest equals running the two optimizers separately."""

from __future__ import annotations

import torch

from tvrl_bench.training.muon import Muon
from tvrl_bench.training.optimizers import MuonWithAdamW


def test_split_optimizer_matches_muon_and_adamw_run_apart():
    torch.manual_seed(0)
    a = [torch.nn.Parameter(torch.randn(4, 3)), torch.nn.Parameter(torch.randn(3))]
    b = [torch.nn.Parameter(p.detach().clone()) for p in a]
    grads = [torch.randn_like(p) for p in a]
    mine = MuonWithAdamW(a, lr=1e-2, weight_decay=0.01, betas=(0.95, 0.95))
    muon = Muon([b[0]], lr=1e-2, weight_decay=0.01, momentum=0.95)
    adamw = torch.optim.AdamW([b[1]], lr=1e-2, betas=(0.95, 0.95), weight_decay=0.01)
    for _ in range(2):
        for p, q, g in zip(a, b, grads):
            p.grad, q.grad = g.clone(), g.clone()
        mine.step(), muon.step(), adamw.step()
    for p, q in zip(a, b):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    assert len(mine.state_dict()["optimizers"]) == 2
