"""The velocity anchor: zero at the pretrained weights, the stated squared difference after drift, and logged."""

from __future__ import annotations

import gin
import torch

from tests.training.conftest import FAST
from tvrl_bench.config import load_config
from tvrl_bench.training.step.anchor import accumulate_anchor_gradient, untrained_steps
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.loop import Trainer
from tvrl_bench.training.step.rollout import Rollout
from tvrl_bench.training.settings import TrialSettings


def trainer(policy_path: str, folder, *bindings: str) -> Trainer:
    load_config(["components/profiles/toy_v1.gin"], [*FAST, f"policies.toy.path = '{policy_path}'",
                                                  "training.schedule.sde_window = (0, 2)", *bindings])
    settings = TrialSettings()
    gin.clear_config()
    return Trainer(settings, Processes(cpu=True), CheckpointDir(folder), None, progress=False)


def test_untrained_steps_are_the_complement_of_the_trained_ones():
    rollout = Rollout(latents=torch.zeros(3, 6, 1), log_probs=torch.zeros(3, 5, 1), sigmas=torch.linspace(1, 0, 6),
                      trained=torch.tensor([[0, 1], [0, 1], [1, 3]]))
    assert untrained_steps(rollout) == [2, 4]


def test_anchor_is_zero_at_the_reference_and_matches_its_formula_after_drift(tiny_policy_path, tmp_path):
    t = trainer(tiny_policy_path, tmp_path)
    batch = t.collect(0)
    rows = torch.arange(len(batch.prompts))
    t.policy.keep_reference()
    t.optimizer.zero_grad(set_to_none=True)
    value = accumulate_anchor_gradient(t.policy, batch.rollout, batch.cond, rows, 3.0, 4, torch.Generator().manual_seed(0))
    assert value == 0.0
    assert all(p.grad is None or float(p.grad.abs().max()) == 0.0 for p in t.parameters)

    with torch.no_grad():  # drift: move every trained weight
        for i, p in enumerate(t.parameters):
            p.add_(0.01 * torch.sin(torch.arange(p.numel(), dtype=torch.float32) + i).reshape(p.shape))
    t.optimizer.zero_grad(set_to_none=True)
    value = accumulate_anchor_gradient(t.policy, batch.rollout, batch.cond, rows, 3.0, 4, torch.Generator().manual_seed(0))
    got = [torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in t.parameters]

    # independently: the step the same generator draws, the reference velocity from the kept copy, then autograd
    steps = untrained_steps(batch.rollout)
    assert steps == [2, 3]
    step = steps[int(torch.randint(len(steps), (1,), generator=torch.Generator().manual_seed(0)))]
    x, sigma = batch.rollout.latents[:, step], batch.rollout.sigmas[step].expand(len(rows))
    current = [p.detach().clone() for p in t.parameters]
    with torch.no_grad():
        for p, ref in zip(t.parameters, t.policy._reference_copy):
            p.copy_(ref)
        v_ref = t.policy.velocity(x, sigma, batch.cond)
        for p, cur in zip(t.parameters, current):
            p.copy_(cur)
    t.optimizer.zero_grad(set_to_none=True)
    expected = 3.0 * (t.policy.velocity(x, sigma, batch.cond) - v_ref).square().mean()
    expected.backward()
    assert value > 0
    assert abs(value - float(expected)) <= 1e-6 * float(expected)
    for g, p in zip(got, t.parameters):
        torch.testing.assert_close(g, torch.zeros_like(p) if p.grad is None else p.grad, rtol=1e-4, atol=1e-9)
    assert sum(float(g.abs().sum()) for g in got) > 0


def test_a_step_with_the_anchor_logs_it(tiny_policy_path, tmp_path):
    t = trainer(tiny_policy_path, tmp_path, "training.trial.anchor_weight = 1.0")
    first = t.step(0).metrics
    second = t.step(1).metrics
    assert first["train/anchor"] == 0.0  # before the first update the policy is the reference
    assert second["train/anchor"] > 0.0


def test_a_resumed_trial_anchors_to_the_pretrained_weights_not_to_its_checkpoint(tiny_policy_path, tmp_path):
    """The trainer keeps the reference before a checkpoint is loaded, as it does for a KL term."""
    pretrained = [p.detach().clone() for p in trainer(tiny_policy_path, tmp_path / "a").parameters]
    t = trainer(tiny_policy_path, tmp_path / "b", "training.trial.anchor_weight = 1.0")
    saved = {"parameters": {str(i): p + 0.5 for i, p in enumerate(pretrained)}, "optimizer": t.optimizer.state_dict(),
             "extra": {}, "step": 3}
    t.load_state(saved)
    assert all(torch.equal(p, q + 0.5) for p, q in zip(t.parameters, pretrained))
    assert all(torch.equal(ref, q) for ref, q in zip(t.policy._reference_copy, pretrained))
