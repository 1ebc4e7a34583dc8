"""A checkpoint damaged on disk between a stop and the rerun: the rerun ends in one line naming the file and the fix
(exit code 2), uses none of it and deletes nothing; after the fix it names (delete the folder) the trial runs anew."""

from __future__ import annotations

import json
import os
import shutil

from mlflow.tracking import MlflowClient

import pytest

from tests.reliability.helpers import assert_error, assert_none_running, run, runs_of
from tests.training.conftest import FAST

pytestmark = pytest.mark.integration


def test_a_damaged_checkpoint_is_refused_with_the_fix_and_never_used(tmp_path, tiny_policy_path):
    config = tmp_path / "faulty.gin"
    config.write_text("import tests.training.faults\ninclude 'components/profiles/toy_v1.gin'\n"
                      "REWARD = @rewards.faulty_oracle()\n")
    uri = f"sqlite:///{tmp_path / 't.db'}"
    command = [str(config), "--steps", "4", "--gin_bindings", *FAST, f"policies.toy.path = '{tiny_policy_path}'",
               "training.trial.checkpoint_every = 1", "training.trial.sample_videos = 0", "--tracking-uri", uri,
               "--out", str(tmp_path / "out"), "--no-progress"]
    stopped = run(tmp_path, "tvrl-train", *command, env={"TVRL_FAULT": "sigterm", "TVRL_FAULT_AT": "2"})
    assert stopped.returncode == 130, stopped.stderr[-3000:]  # stopped at a step boundary, with a checkpoint
    [folder] = (tmp_path / "out" / "trials").iterdir()
    state = folder / "state.pt"
    assert not json.loads((folder / "trial.json").read_text())["finished"] and (folder / "state.pt.sha256").is_file()

    size = state.stat().st_size
    n = min(4096, size // 4)
    with open(state, "r+b") as file:  # a disk or copy fault in the middle of the file
        file.seek(size // 2 - n // 2)
        file.write(os.urandom(n))
    damaged = state.read_bytes()

    # As if the stopped process had been SIGKILLed: its run still RUNNING.
    [interrupted] = runs_of(uri, "trials")
    MlflowClient(uri).update_run(interrupted.info.run_id, status="RUNNING")
    refused = run(tmp_path, "tvrl-train", *command)
    line = assert_error(refused, "tvrl-train", 2, str(state), "does not match the SHA-256", "state.pt.sha256",
                        f"delete the folder {folder}")
    assert "resuming trial" not in refused.stderr
    assert_none_running(uri, "trials")
    assert state.read_bytes() == damaged  # kept as it was, for whoever restores or inspects it
    assert "Traceback" not in line
    statuses = {r.info.run_id: r for r in runs_of(uri, "trials")}
    assert statuses.pop(interrupted.info.run_id).info.status == "KILLED"  # marked at this start
    [failed] = statuses.values()  # the refused attempt's run says why
    assert failed.info.status == "FAILED" and "does not match the SHA-256" in failed.data.tags["tvrl.error"]

    shutil.rmtree(folder)  # the fix the line names
    anew = run(tmp_path, "tvrl-train", *command)
    assert anew.returncode == 0, anew.stderr[-3000:]
    assert "resuming trial" not in anew.stderr
    assert json.loads((folder / "trial.json").read_text())["finished"]
    assert_none_running(uri, "trials")
    assert sorted(r.info.status for r in runs_of(uri, "trials")) == ["FAILED", "FINISHED", "KILLED"]
