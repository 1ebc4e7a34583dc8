"""The tvrl-sweep flags a study's trials on disk were swept with, read back for wide-eval's advice
(tvrl_bench/sweeps/wide_eval_flags.py). The trial folders are written as a sweep leaves them (their trial.json)."""

from __future__ import annotations

import pytest

from tests.sweeps.helpers import write_study
from tvrl_bench.sweeps.plan import expand, load_study
from tvrl_bench.sweeps.wide_eval import TrialNotFinished
from tvrl_bench.sweeps.wide_eval_flags import check_finished, sweep_flags
from tvrl_bench.training.checkpoint import CheckpointDir

PROFILES = "sweeps.study.profiles = {'v1': 'components/profiles/toy_v1.gin', 'v2': 'components/profiles/toy_v2.gin'}\n"


def specs_of(study_file: str, profile: str | None = None, steps: int | None = None):
    study, resolved = load_study(study_file, profile)
    return expand(study, resolved, [f"training.trial.steps = {steps}"] if steps is not None else [])


def finish(runs, specs, steps: int) -> None:
    for spec in specs:
        CheckpointDir(runs / spec.key).write_info("run", 0 if spec.base else steps, finished=True)


@pytest.fixture
def study_file(tmp_path, tiny_policy_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    study = write_study(tmp_path, tiny_policy_path, axes="{'credit': ['uniform']}", steps=2)
    study.write_text(study.read_text() + "sweeps.study.base = True\n" + PROFILES)
    return str(study)


def test_the_profile_and_steps_a_study_was_swept_with_are_named(study_file, tmp_path):
    runs = tmp_path / "out" / "runs" / "tiny"
    finish(runs, specs_of(study_file, "v2", 3), steps=3)
    assert sweep_flags(study_file, None, None, runs) == "--profile v2 --steps 3"
    with pytest.raises(TrialNotFinished, match=rf"^{runs}: its 2 trials were swept with --profile v2 --steps 3, not "
                                               r"--steps 1 \(other flags give other trial keys\); pass wide-eval "
                                               r"--profile v2 --steps 3, as tvrl-sweep ran$"):
        check_finished(specs_of(study_file, None, 1), runs, study_file, None, 1)
    check_finished(specs_of(study_file, "v2", 3), runs, study_file, "v2", 3)  # the right flags: nothing to say


def test_an_unfinished_trial_or_a_changed_study_file_is_said_so(study_file, tmp_path):
    runs = tmp_path / "out" / "runs" / "tiny"
    specs = specs_of(study_file)
    finish(runs, specs[:1], steps=2)
    CheckpointDir(runs / specs[1].key).write_info("run", 1)  # interrupted at step 1
    with pytest.raises(TrialNotFinished, match=rf"{specs[1].key}: trial credit=uniform seed=0 has no finished "
                                               r"checkpoint; finish the study first"):
        check_finished(specs, runs, study_file, None, None)
    (runs / specs[1].key / "trial.json").unlink()
    (runs / specs[1].key).rename(runs / "0123456789abcdef")  # a trial of an earlier version of the study file
    (runs / "0123456789abcdef" / "trial.json").write_text('{"run_id": "r", "step": 2, "finished": true}')
    assert sweep_flags(study_file, None, None, runs) is None
    with pytest.raises(TrialNotFinished, match=r"the study file changed since the sweep; pass wide-eval the study "
                                               r"file tvrl-sweep ran"):
        check_finished(specs, runs, study_file, None, None)
