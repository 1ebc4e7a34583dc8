"""Adding a critic is one module and one preset: a component registered from a module outside the package is
swept over as an axis value and named in its runs' params, with no file of tvrl-bench touched."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from mlflow.tracking import MlflowClient

import pytest

from tests.support import console_script
from tests.sweeps.helpers import write_study

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]

CRITIC = '''
"""A critic that prefers bright videos (outside tvrl-bench: only the registry and the contract are imported)."""

import torch

from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward


@register("rewards", "brightness")
class Brightness(Reward):
    """Mean pixel value of the video: one head, no checks."""

    uses_checks = False
    score_names = ("brightness",)
    score_space = "score"

    def __init__(self, gain: float = 1.0):
        super().__init__()
        self.gain = gain
        self.freeze()

    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        return self.gain * videos.mean(dim=(1, 2, 3, 4))
'''


def test_a_critic_from_outside_the_package_is_swept_and_named_in_the_run_params(tmp_path, tiny_policy_path):
    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "__init__.py").write_text("")
    (lab / "brightness_critic.py").write_text(CRITIC)
    presets = tmp_path / "mine" / "components" / "rewards"
    presets.mkdir(parents=True)
    (presets / "brightness.gin").write_text(
        "import lab.brightness_critic\nREWARD = @rewards.brightness()\nrewards.brightness.gain = 2.0\n")
    study = write_study(tmp_path, tiny_policy_path, name="external", steps=1,
                        axes="{'reward': ['toy_oracle', 'brightness'], 'credit': ['uniform']}")
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)]),
           "TVRL_BENCH_PATH": str(tmp_path / "mine")}
    done = subprocess.run([console_script("tvrl-sweep"), str(study), "--tracking-uri", uri, "--out", str(tmp_path / "out"),
                           "--no-progress", "--no-tables", "--workers", "2"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("external").experiment_id])
    trials = {r.data.params["reward"]: r for r in runs if r.data.tags.get("tvrl.role") == "trial"}
    assert set(trials) == {"toy_oracle", "brightness"}
    assert all(r.info.status == "FINISHED" for r in trials.values())
    bright = trials["brightness"].data.params
    assert bright["rewards.brightness.gain"] == "2.0" and bright["method"] == "GRPO"
    assert "rewards.brightness.gain" not in trials["toy_oracle"].data.params
