"""A training step's results do not depend on the speed optimisations: with each of them on and off, the step's
rollouts (latents and per-token log-probs), critic rewards, gradients and updated parameters agree to float
rounding (benchmarks/step.py and docs/performance.md measure what they buy)."""

from __future__ import annotations

import gin
import pytest
import torch

from tests.training.conftest import FAST
from tvrl_bench.config import load_config
from tvrl_bench.training import loop
from tvrl_bench.training.step import collect, rollout
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.settings import TrialSettings

# Every optimisation off: diffusers' own transformer forward, the update recomputing the trained transitions.
REFERENCE = ["policies.toy.fast = False", "training.trial.keep_rollout_graph = False"]
# Each optimisation alone, so a difference names its cause.
OPTIMISATIONS = {
    "lean_forward": ["policies.toy.fast = True", "training.trial.keep_rollout_graph = False"],
    "keep_rollout_graph": ["policies.toy.fast = False", "training.trial.keep_rollout_graph = True"],
}


def run_step(folder, monkeypatch, bindings: list[str]) -> dict:
    """One step of the toy profile (shipped policy, FAST sizes); what it sampled, scored and updated."""
    load_config(["components/profiles/toy_v1.gin"], FAST + bindings)
    settings = TrialSettings()
    gin.clear_config()
    trainer = loop.Trainer(settings, Processes(cpu=True), CheckpointDir(folder), None, progress=False)
    seen: dict = {}
    sample, score = rollout.sample_rollouts, collect.score_videos

    def recording_sample(*args, **kwargs):
        seen["rollout"] = sample(*args, **kwargs)
        seen["kept_steps"] = sorted(seen["rollout"].graphs)
        return seen["rollout"]

    def recording_score(*args, **kwargs):
        seen["scored"] = score(*args, **kwargs)
        return seen["scored"]

    monkeypatch.setattr(rollout, "sample_rollouts", recording_sample)  # roll_out samples through it
    monkeypatch.setattr(collect, "score_videos", recording_score)
    optimizer_step = trainer.optimizer.step

    def recording_optimizer_step(*args, **kwargs):
        # (the last block's text-stream outputs never reach the video: no gradient there)
        grads = [torch.zeros_like(p) if p.grad is None else p.grad.detach().clone() for p in trainer.parameters]
        seen.setdefault("grads", []).append(grads)
        return optimizer_step(*args, **kwargs)

    trainer.optimizer.step = recording_optimizer_step
    seen["metrics"] = trainer.step(0).metrics
    seen["parameters"] = [p.detach().clone() for p in trainer.parameters]
    seen["lr"] = settings.optimizer.learning_rate
    return seen


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        return run_step(tmp_path_factory.mktemp("reference"), monkeypatch, REFERENCE)


@pytest.mark.parametrize("name", list(OPTIMISATIONS))
def test_step_results_equal_the_reference_to_float_rounding(reference, tmp_path, monkeypatch, name):
    optimised = run_step(tmp_path, monkeypatch, OPTIMISATIONS[name])
    a, b = optimised["rollout"], reference["rollout"]
    assert torch.equal(a.trained, b.trained)
    assert reference["kept_steps"] == []
    if name == "keep_rollout_graph":  # the optimisation took effect: every trained step's graph was kept
        assert optimised["kept_steps"] == sorted(set(a.trained.flatten().tolist())) != []
    torch.testing.assert_close(a.latents, b.latents, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(a.log_probs, b.log_probs, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(optimised["scored"].rewards(), reference["scored"].rewards(), rtol=1e-4, atol=1e-4)
    assert len(optimised["grads"]) == len(reference["grads"])
    for grads, grads_ref in zip(optimised["grads"], reference["grads"]):
        largest = max(float(g.abs().max()) for g in grads_ref)
        for g, g_ref in zip(grads, grads_ref):
            scale = max(float(g_ref.abs().max()), 1e-4 * largest)
            torch.testing.assert_close(g / scale, g_ref / scale, rtol=0, atol=2e-3)
    # AdamW's first step moves each parameter by about lr x g / |g|: where a gradient is zero in exact arithmetic
    # (a key bias shifts all of a query's scores equally) its rounding noise decides the direction. Elsewhere the
    # parameters agree to a tenth of lr; everywhere they agree to the largest possible move, 2 lr.
    lr = reference["lr"]
    largest = max(float(g.abs().max()) for g in reference["grads"][-1])
    for p, p_ref, g_ref in zip(optimised["parameters"], reference["parameters"], reference["grads"][-1]):
        clear = g_ref.abs() > 1e-5 * largest
        torch.testing.assert_close(p[clear], p_ref[clear], rtol=0, atol=0.1 * lr)
        torch.testing.assert_close(p, p_ref, rtol=0, atol=2 * lr)
    # At the first step the ratio is 1 and the advantages sum to 0, so the loss is 0 up to rounding of terms the
    # size of the advantages: compare it at that scale, like the other quantities (rounding once measured 4e-6).
    scale = reference["metrics"]["train/advantage_abs"]
    assert optimised["metrics"]["train/loss"] == pytest.approx(reference["metrics"]["train/loss"], rel=1e-3, abs=1e-4 * scale)
