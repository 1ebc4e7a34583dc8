"""Faults while trials run: each ends in one line, leaves no run RUNNING, and is never silently absent from the
tables (a trial that fails before its run exists still gets a FAILED run, and its cells say so)."""

from __future__ import annotations


import pytest

from tests.reliability.helpers import assert_error, assert_none_running, files_in, run, runs_of, written_outside
from tests.sweeps.helpers import write_study
from tests.training.conftest import FAST
from tvrl_bench import config as gin_config
from tvrl_bench.training.trial.identity import trial_key

pytestmark = pytest.mark.integration

TOY = "components/profiles/toy_v1.gin"


def test_a_critic_that_cannot_be_built_is_a_failed_cell_not_a_missing_row(tmp_path, tiny_policy_path):
    broken = tmp_path / "broken_critic.gin"
    broken.write_text("include 'components/rewards/toy_learned.gin'\nrewards.toy_learned.path = '/nowhere/critic'\n")
    study = write_study(tmp_path, tiny_policy_path, steps=1, axes=f"{{'reward': ['toy_oracle', '{broken}']}}")
    study.write_text(study.read_text().replace("['samplers']", "['rewards']"))
    uri = f"sqlite:///{tmp_path / 'q.db'}"
    before = files_in(tmp_path)
    result = run(tmp_path, "tvrl-sweep", str(study), "--tracking-uri", uri, "--out", str(tmp_path / "out"),
                 "--no-progress", "--max-attempts", "1")
    assert result.returncode == 1, result.stderr[-4000:]
    assert "1 finished, 1 failed" in result.stdout
    failed_line = next(line for line in result.stderr.splitlines() if line.startswith("  FAILED "))
    assert "reward=broken_critic" in failed_line and "no learned toy critic at /nowhere/critic" in failed_line
    runs = runs_of(uri, "tiny")
    trials = {r.data.params.get("reward"): r for r in runs if r.data.tags.get("tvrl.role") == "trial"}
    assert trials["broken_critic"].info.status == "FAILED" and trials["toy_oracle"].info.status == "FINISHED"
    assert "no learned toy critic" in trials["broken_critic"].data.tags["tvrl.error"]
    assert trials["broken_critic"].info.run_name == "broken_critic-s0"
    assert_none_running(uri, "tiny")
    table = (tmp_path / "out" / "reports" / "tiny" / "rewards.md").read_text()
    assert "broken_critic TVRL" in table and "FAILED 1" in table  # its row is there, with why it is empty
    assert not written_outside(tmp_path, before, ("out", "q.db", "q_artifacts"))  # the store's artifacts, beside it


def test_a_checkpoint_that_cannot_be_written_is_one_line_and_a_failed_run(tmp_path, tiny_policy_path):
    bindings = [*FAST, f"policies.toy.path = '{tiny_policy_path}'", "training.trial.checkpoint_every = 1",
                "training.trial.sample_videos = 0", "training.trial.steps = 2"]
    gin_config.load_config([TOY], bindings)
    folder = tmp_path / "out" / "trials" / trial_key()
    (folder / "state.pt.tmp").mkdir(parents=True)  # the checkpoint's temporary file cannot be created
    uri = f"sqlite:///{tmp_path / 't.db'}"
    before = files_in(tmp_path)
    result = run(tmp_path, "tvrl-train", TOY, "--gin_bindings", *bindings, "--tracking-uri", uri,
                 "--out", str(tmp_path / "out"), "--no-progress")
    line = assert_error(result, "tvrl-train", 2, "could not write the checkpoint", str(folder / "state.pt.tmp"), "remove it",
                        "rerun the same command to resume")
    assert "enforce fail" not in line
    [trial] = runs_of(uri, "trials")
    assert trial.info.status == "FAILED"
    assert not written_outside(tmp_path, before, ("out", "t.db", "t_artifacts"))
