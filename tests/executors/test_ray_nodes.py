"""The Ray executor's multi-node trials on a real one-node Ray cluster (`ray.init(num_cpus=1)` in this process):
M = 2 asks for a STRICT_SPREAD placement group of 2 bundles, which one node cannot place, so the trial waits and a
stop leaves it not started; M = 1 with 2 processes runs a real trial end to end through a placement group, the
probe for the main address and a node task launching accelerate."""

from __future__ import annotations

import os
import time
from concurrent.futures import TimeoutError as FutureTimeout

import pytest
from mlflow.tracking import MlflowClient

from tests.cli.test_train import ROOT, bindings, digests
from tvrl_bench.executors.base import NOT_STARTED, TrialCommand

pytest.importorskip("ray")
# tests/cli/test_sweep.py's Ray test ends with `ray stop --force`, which stops every Ray process on the machine: under
# pytest-xdist the Ray tests share one worker (`--dist loadgroup`), so they run one after the other.
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("ray")]


@pytest.fixture(scope="module")
def ray_cluster():
    """A local cluster without token authentication: a new local cluster otherwise writes ~/.ray/auth_token, after
    which `ray start --head` clusters (tests/cli/test_sweep.py) demand a token their drivers do not send."""
    import ray

    saved = {name: os.environ.get(name) for name in ("RAY_AUTH_MODE", "RAY_USAGE_STATS_ENABLED")}
    os.environ.update(RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    try:
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
        yield ray
    finally:
        ray.shutdown()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def executor(nodes: int, per_node: int = 1):
    from tvrl_bench.executors.ray_executor import RayExecutor

    return RayExecutor(address="auto", cpus_per_trial=1.0, threads=1, nodes_per_trial=nodes, processes_per_node=per_node)


def test_two_nodes_ask_for_two_strictly_spread_bundles_and_a_stop_leaves_the_trial_not_started(ray_cluster, tmp_path):
    from ray.util import placement_group_table

    runner = executor(2)
    future = runner.submit(TrialCommand(("components/profiles/toy_v1.gin",), log_path=str(tmp_path / "t.log")))
    deadline = time.monotonic() + 60
    groups = []
    while not groups and time.monotonic() < deadline:
        groups = [g for g in placement_group_table().values() if g["state"] == "PENDING"]
        time.sleep(0.2)
    assert len(groups) == 1, placement_group_table()
    assert groups[0]["strategy"] == "STRICT_SPREAD" and groups[0]["bundles"] == {0: {"CPU": 1.0}, 1: {"CPU": 1.0}}
    with pytest.raises(FutureTimeout):
        future.result(timeout=2)  # one node cannot place two strictly spread bundles: the trial waits
    runner.interrupt()
    assert future.result(timeout=60) == NOT_STARTED
    time.sleep(1)
    assert all(g["state"] == "REMOVED" for g in placement_group_table().values())
    runner.pool.shutdown()  # not runner.shutdown(): the cluster stays up for the next test


def test_a_trial_of_two_processes_on_one_ray_node_runs_through_its_placement_group(ray_cluster, tmp_path,
                                                                                    tiny_policy_path):
    uri = f"sqlite:///{tmp_path / 'ray.db'}"
    args = ("components/profiles/toy_v1.gin", "--steps", "2", *bindings(tiny_policy_path), "--tracking-uri", uri,
            "--out", str(tmp_path / "runs"))
    log = tmp_path / "trial.log"
    code = executor(1, per_node=2).submit(TrialCommand(args, env={"PYTHONPATH": str(ROOT)}, log_path=str(log))).result(timeout=600)
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert "rank 0/2" in text and "rank 1/2" in text  # accelerate's launch of node 0 of 1, two processes
    found = digests(text)
    assert len(found) == 2 and found[0] == found[1]
    client = MlflowClient(uri)
    (run,) = client.search_runs([client.get_experiment_by_name("trials").experiment_id])
    assert run.info.status == "FINISHED"
