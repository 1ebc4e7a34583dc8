"""Muon: torch.optim.Muon's update exactly when the Newton-Schulz iteration runs in bfloat16, and float32 on CPU."""

from __future__ import annotations

import copy

import pytest
import torch

from tvrl_bench.training.muon import Muon, newton_schulz


def _run(optimizer_cls, shapes, steps=3, **kwargs):
    """Parameters of `shapes` after `steps` steps of `optimizer_cls` on fixed random gradients."""
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(*s)) for s in shapes]
    grads = [[torch.randn(*s) for s in shapes] for _ in range(steps)]
    optimizer = optimizer_cls(params, **kwargs)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = g.clone()
        optimizer.step()
    return [p.detach() for p in params]


@pytest.mark.parametrize("nesterov", [True, False])
def test_bfloat16_iteration_is_torch_muon_exactly(nesterov):
    shapes = [(12, 5), (5, 12), (7, 7)]  # tall (lr scaled by sqrt(12/5)), wide, square
    settings = dict(lr=3e-2, weight_decay=0.1, momentum=0.9, nesterov=nesterov)
    ours = _run(Muon, shapes, ns_dtype=torch.bfloat16, **settings)
    torchs = _run(torch.optim.Muon, shapes, **settings)
    for a, b in zip(ours, torchs):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_cpu_default_iterates_in_float32_and_agrees_with_torch_to_bfloat16_rounding():
    shapes = [(64, 48), (48, 64)]
    start = _run(Muon, shapes, steps=0)
    ours = _run(Muon, shapes, lr=1e-2)
    torchs = _run(torch.optim.Muon, shapes, lr=1e-2)
    for s, a, b in zip(start, ours, torchs):
        step_ours, step_torch = a - s, b - s
        assert not torch.equal(step_ours, step_torch)  # a different dtype really ran
        assert (step_ours - step_torch).norm() < 0.05 * step_torch.norm()


def test_newton_schulz_pushes_singular_values_towards_one_with_the_input_singular_vectors():
    torch.manual_seed(1)
    u, _ = torch.linalg.qr(torch.randn(40, 40, dtype=torch.float64))
    v, _ = torch.linalg.qr(torch.randn(24, 24, dtype=torch.float64))
    s = torch.logspace(-2, 1, 24, dtype=torch.float64)  # condition number 1000
    g = (u[:, :24] * s) @ v.T
    out = newton_schulz(g.float()).double()
    assert out.dtype == torch.float64 and out.shape == (40, 24)
    # In the input's singular basis the output is nearly diagonal, with the iteration's 0.5-1.5 band on the diagonal.
    core = u[:, :24].T @ out @ v
    diag = core.diagonal()
    assert (core - torch.diag(diag)).abs().max() < 1e-3
    assert diag[-12:].min() > 0.6 and diag.max() < 1.3  # the larger half is well inside the band
    assert newton_schulz(g.float()).dtype == torch.float32
    assert newton_schulz(g.float(), dtype=torch.bfloat16).dtype == torch.bfloat16


def test_muon_refuses_what_is_not_a_matrix():
    with pytest.raises(ValueError, match="2-D parameters only"):
        Muon([torch.nn.Parameter(torch.zeros(3))])
    with pytest.raises(ValueError, match="2-D updates"):
        newton_schulz(torch.zeros(2, 3, 4))


def test_state_round_trips_through_state_dict():
    torch.manual_seed(2)
    p = torch.nn.Parameter(torch.randn(6, 4))
    optimizer = Muon([p], lr=1e-2)
    p.grad = torch.randn(6, 4)
    optimizer.step()
    q = torch.nn.Parameter(p.detach().clone())
    resumed = Muon([q], lr=1e-2)
    resumed.load_state_dict(copy.deepcopy(optimizer.state_dict()))  # as a checkpoint holds it
    g = torch.randn(6, 4)
    p.grad, q.grad = g.clone(), g.clone()
    optimizer.step(), resumed.step()
    torch.testing.assert_close(p, q, rtol=0, atol=0)
