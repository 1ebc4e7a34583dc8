"""One process owns a trial key's folder and run, one sweep owns a study: a second one stops in one line naming
the owner's pid, before it creates a run or touches a checkpoint (duplicates within a study: test_inputs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability.helpers import assert_error, files_in, run, write_study
from tvrl_bench import config as gin_config
from tvrl_bench.sweeps.driver import SWEEP_LOCK, SweepOptions, plan
from tvrl_bench.training.trial.identity import trial_key
from tvrl_bench.training.trial.lock import FolderLock

pytestmark = pytest.mark.integration

TOY = "components/profiles/toy_v1.gin"


def test_a_trial_that_another_process_runs_is_refused(tmp_path):
    bindings = ["training.trial.eval_prompts = 2"]
    gin_config.load_config([TOY], bindings)
    key = trial_key()
    uri = f"sqlite:///{tmp_path / 't.db'}"
    with FolderLock(tmp_path / "out" / "trials" / key):  # this test process is the live owner
        before = files_in(tmp_path)
        result = run(tmp_path, "tvrl-train", TOY, "--gin_bindings", *bindings, "--tracking-uri", uri,
                     "--out", str(tmp_path / "out"), "--no-progress")
        assert_error(result, "tvrl-train", 2, key, f"in use by process {os.getpid()}", "wait for that process")
        assert files_in(tmp_path) == before  # no run, no database, the owner's folder untouched


def test_a_sweep_refuses_while_its_trials_or_the_study_are_owned_elsewhere(tmp_path):
    study = write_study(tmp_path, "/nowhere", axes="{'credit': ['uniform', 'window3']}")
    key = plan(str(study), SweepOptions())[1][1].key
    folders = tmp_path / "out" / "runs" / "tiny"
    args = [str(study), "--tracking-uri", f"sqlite:///{tmp_path / 'q.db'}", "--out", str(tmp_path / "out"),
            "--no-progress"]
    with FolderLock(folders / key):  # an orphan of an earlier sweep still runs this trial
        before = files_in(tmp_path)
        result = run(tmp_path, "tvrl-sweep", *args)
        assert_error(result, "tvrl-sweep", 2, f"{key} (credit=window3 seed=0) in process {os.getpid()}",
                     f"kill {os.getpid()}")
        # no parent run, no database; only the study's own lock file under --out
        assert files_in(tmp_path) - before <= {Path("out/runs/tiny/.sweep.lock")} and not (tmp_path / "q.db").exists()
    with FolderLock(folders, SWEEP_LOCK, what="study tiny"):  # another sweep of the same study and --out
        before = files_in(tmp_path)
        result = run(tmp_path, "tvrl-sweep", *args)
        assert_error(result, "tvrl-sweep", 2, "study tiny folder", f"in use by process {os.getpid()}")
        assert files_in(tmp_path) == before and not (tmp_path / "q.db").exists()
