"""Every script in benchmarks/ and diagnostics/ runs to its last line with its smallest arguments (a tiny random toy
policy, a few rollouts, one step), so a refactor of the package cannot break one unnoticed. Their figures are not
checked here: speed is measured by running them as docs/benchmarks.md says, never asserted in tests.

A new script must be added to SMOKE_ARGS (with its smallest arguments) or to HELPERS."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.training.conftest import FAST

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.relative_to(ROOT).as_posix() for folder in ("benchmarks", "diagnostics")
                 for p in (ROOT / folder).glob("*.py"))
HELPERS = {"diagnostics/profile_trainer.py"}  # imported by the gradient diagnostics, not run
# FAST without the dataset sizes: a few scripts pick prompts with four or more checks from the training set
SMALL = [b for b in FAST if not b.startswith("datasets.")]
TINY = "policies.toy.path = '{policy}'"
PROFILE = ["--profile", "components/profiles/toy_v1.gin", "--gin_bindings", *SMALL, TINY]

SMOKE_ARGS: dict[str, list[str]] = {
    "benchmarks/cli_start.py": ["--repeats", "1"],
    "benchmarks/gpu_smoke.py": ["--steps", "1", "--allow-cpu"],
    "benchmarks/report.py": ["--root", "{tmp}/report", "--repeats", "1", "--runs", "48"],
    "benchmarks/study_page.py": ["--root", "{tmp}/page", "--repeats", "1"],
    "benchmarks/step.py": ["--steps", "1", "--credit-repeats", "1", "--policy-path", "{policy}", "--gin_bindings",
                           *SMALL],
    "benchmarks/sweep.py": ["--trials", "2", "--steps", "1"],
    "benchmarks/toy_world.py": ["--n", "4"],
    "diagnostics/ascent.py": ["--batches", "4", "--held_out", "1", "--alphas", "1e-3", *PROFILE],
    "diagnostics/base_competence.py": ["--policy", "{policy}", "--prompts", "4", "--sample_steps", "2"],
    "diagnostics/calibration.py": ["--prompts", "2", "--group", "2", *PROFILE],
    "diagnostics/chain_linearity.py": ["--alphas", "1e-5", "--rollouts", "2", *PROFILE],
    "diagnostics/credit_concentration.py": ["components/credit/located.gin", "--steps", "1", *PROFILE],
    "diagnostics/distill_ceiling.py": ["--prompts", "2", "--group", "2", "--steps", "1", "--batch", "2",
                                       "--eval_prompts", "4", *PROFILE],
    "diagnostics/grad_signal.py": ["--batches", "2", *PROFILE],
    "diagnostics/pathwise.py": ["--steps", "1", "--eval_every", "1", *PROFILE],
    "diagnostics/step_landscape.py": ["--alphas", "1e-5", *PROFILE],
}


def test_every_script_has_its_smallest_arguments():
    assert sorted(set(SMOKE_ARGS) | HELPERS) == SCRIPTS


@pytest.mark.parametrize("script", sorted(SMOKE_ARGS))
def test_a_script_runs_to_its_last_line(script, tiny_policy_path, tmp_path):
    args = [a.format(policy=tiny_policy_path, tmp=tmp_path) for a in SMOKE_ARGS[script]]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, script, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, f"{script} {' '.join(args)}\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    assert result.stdout.strip(), f"{script} printed nothing"
