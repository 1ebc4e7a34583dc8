"""A study file's own bindings (sweeps.study.bindings) are named at their line in the study file when a trial's
config refuses them, not blamed on the command line (sweeps/validate.py `in_study_file`)."""

from __future__ import annotations

import pytest

from tvrl_bench.config import ConfigError
from tvrl_bench.sweeps.plan import expand, load_study


@pytest.mark.parametrize("binding, needle", [
    ("training.trial.learning_rate = 1e-4", "'training.trial.learning_rate' has moved to 'training.optimizer."),
    ("objectives.grpo.clip_range = -1.0", "objectives.grpo.clip_range = -1.0 must be a number > 0"),
])
def test_a_study_files_binding_is_named_at_its_line(tmp_path, binding, needle):
    study = tmp_path / "old.gin"
    study.write_text("sweeps.study.name = 'old'\nsweeps.study.axes = {'credit': ['uniform']}\n"
                     f"sweeps.study.seeds = [0]\nsweeps.study.bindings = [\n    'training.trial.steps = 1',\n"
                     f"    '{binding}',\n]\n")
    loaded, resolved = load_study(str(study))
    with pytest.raises(ConfigError) as err:
        expand(loaded, resolved)
    (line,) = str(err.value).splitlines()
    assert line.startswith(f"{study}:6 (sweeps.study.bindings): ") and needle in line, line
    assert "--gin_bindings" not in line


def test_a_command_line_override_is_still_named_as_such(tmp_path):
    study = tmp_path / "ok.gin"
    study.write_text("sweeps.study.name = 'ok'\nsweeps.study.axes = {'credit': ['uniform']}\nsweeps.study.seeds = [0]\n")
    loaded, resolved = load_study(str(study))
    with pytest.raises(ConfigError, match=r"^--gin_bindings: training.trial.steps = -1 must be"):
        expand(loaded, resolved, ["training.trial.steps = -1"])
