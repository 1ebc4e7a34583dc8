"""One trial over 2 "nodes" x 1 process on loopback (gloo), started by `tvrl-sweep --nodes-per-trial 2` (the local
executor runs one `node_command` per node): the same parameters as 2 processes on one node; a node that dies fails
the trial, and rank 0 marks its run FAILED."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_sweep import study_runs, sweep
from tests.cli.test_train import ROOT, bindings, digests, train
from tests.sweeps.helpers import write_study
from tvrl_bench.executors.nodes import free_port, node_command

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def one_node_digest(tmp_path_factory, tiny_policy_path) -> str:
    """The final parameters' digest of the trial on 2 processes of one node."""
    folder = tmp_path_factory.mktemp("one_node")
    launcher = node_command([], 1, 0, "127.0.0.1", free_port(), processes_per_machine=2)
    single = train(Path(folder), "components/profiles/toy_v1.gin", "--cpu", "--steps", "2",
                   *bindings(tiny_policy_path), launcher=launcher, env={"OMP_NUM_THREADS": "1"})
    assert single.returncode == 0, single.stderr[-3000:]
    found = digests(single.stderr)
    assert len(found) == 2 and found[0] == found[1]
    return found[0]


def test_a_sweep_runs_one_trial_over_two_local_nodes_as_one_run(tmp_path, tiny_policy_path, one_node_digest):
    study = write_study(tmp_path, tiny_policy_path, axes="{'credit': ['window3']}")  # toy.gin's own credit
    result = sweep(tmp_path, study, "--workers", "1", "--threads", "1", "--nodes-per-trial", "2",
                   "--processes-per-node", "1", "--no-tables")
    assert result.returncode == 0, result.stderr[-4000:]
    assert "1 finished, 0 failed" in result.stdout
    _, parents, trials = study_runs(f"sqlite:///{tmp_path / 'q.db'}", "tiny")
    assert len(parents) == 1 and len(trials) == 1 and trials[0].info.status == "FINISHED"  # rank 0 logs, once
    (log,) = (tmp_path / "out" / "logs" / "tiny").iterdir()
    text = log.read_text()
    assert "rank 0/2" in text and "rank 1/2" in text
    assert set(digests(text)) == {one_node_digest}


def test_a_node_that_dies_fails_the_trial_and_rank_0_marks_its_run_failed(tmp_path, tiny_policy_path):
    from tests.cli.test_train import runs
    from tvrl_bench.executors.nodes import wait_for_nodes

    config = tmp_path / "faulty.gin"  # node 1's oracle SIGKILLs its process in the second step
    config.write_text("import tests.training.faults\ninclude 'components/profiles/toy_v1.gin'\nREWARD = @rewards.faulty_oracle()\n")
    args = [str(config), "--cpu", "--steps", "4", *bindings(tiny_policy_path), "--tracking-uri",
            f"sqlite:///{tmp_path / 't.db'}", "--out", str(tmp_path / "runs"), "--no-progress"]
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    nodes = [subprocess.Popen(node_command(args, 2, rank, "127.0.0.1", port), cwd=tmp_path,
                              env={**env, **({"TVRL_FAULT": "sigkill", "TVRL_FAULT_AT": "2"} if rank else {})},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for rank in (0, 1)]
    assert wait_for_nodes(nodes, grace_s=60) != 0  # node 0 fails on its own: its peer's sockets closed
    _, found = runs(tmp_path)
    assert [r.info.status for r in found] == ["FAILED"]
