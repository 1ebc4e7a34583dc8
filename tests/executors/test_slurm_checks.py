"""Settings the cluster cannot meet are refused before anything is submitted, each one line naming the setting
and the fix (checked against fake Slurm commands, tests/executors/fake_slurm.py: partitions `debug`, the default,
2 nodes of 4 CPUs, no GPUs, 60 min; `gpu`, 4 nodes of 16 CPUs and 4 GPUs, 2 days)."""

from __future__ import annotations

import os
import sys

import pytest

from tests.executors.fake_slurm import FakeSlurm
from tvrl_bench.config import ConfigError
from tvrl_bench.executors.slurm_executor import SlurmExecutor


@pytest.fixture
def fake(tmp_path, monkeypatch) -> FakeSlurm:
    return FakeSlurm(tmp_path / "slurm").install(monkeypatch)


def executor(**settings) -> SlurmExecutor:
    return SlurmExecutor(poll_s=0.02, **settings)


@pytest.mark.parametrize("settings, needle", [
    ({"partition": "gpux"}, "--partition gpux: no such Slurm partition; did you mean 'gpu'?"),
    ({"time_limit": "2:00:00"}, "--time-limit 2:00:00: longer than partition debug allows (60 min)"),
    ({"time_limit": "soon"}, "--time-limit soon: not a Slurm time"),
    ({"gpus_per_node": 1}, "--gpus-per-node 1: the nodes of partition debug have no GPUs"),
    ({"trial_gpus": 2}, "training.trial.num_gpus = 2: the nodes of partition debug have no GPUs"),
    ({"partition": "gpu", "gpus_per_node": 8}, "--gpus-per-node 8: the nodes of partition gpu have 4 GPUs"),
    ({"nodes_per_trial": 3}, "--nodes-per-trial 3: partition debug has 2 node(s)"),
    ({"cpus_per_trial": 1.5}, "--cpus-per-trial 1.5: Slurm allocates whole CPUs"),
    ({"cpus_per_trial": 8}, "--cpus-per-trial 8: the nodes of partition debug have 4 CPUs"),
])
def test_settings_the_cluster_cannot_meet_are_refused_before_anything_is_submitted(fake, settings, needle):
    with pytest.raises(ConfigError) as error:
        executor(**settings)
    assert needle in str(error.value).split("\n")[0]  # gin's "In call to configurable" below: the CLI drops it
    assert fake.calls("sbatch") == []


def test_missing_slurm_commands_are_one_line_naming_them_and_the_fix(tmp_path, monkeypatch):
    fake = FakeSlurm(tmp_path / "slurm", only=("squeue", "sinfo"))
    monkeypatch.setenv("PATH", fake.environment(path=os.path.dirname(sys.executable))["PATH"])  # no real Slurm
    with pytest.raises(ConfigError, match=r"--executor slurm: sbatch, scontrol, scancel not found on PATH; run "
                                          r"tvrl-sweep on a machine of the Slurm cluster"):
        executor()


def test_a_partition_is_named_when_the_cluster_has_no_default(tmp_path, monkeypatch):
    FakeSlurm(tmp_path / "slurm", partitions="a|1:00:00|1|4|(null)\n").install(monkeypatch)
    with pytest.raises(ConfigError, match="--partition: the cluster has no default partition; name one"):
        executor()
    executor(partition="a").shutdown()
