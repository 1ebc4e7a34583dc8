"""Reading Slurm's answers: times in minutes, GPUs per node from sinfo, a job's final state from scontrol, this
user's queue from squeue (the last two through the fake commands, tests/executors/fake_slurm.py)."""

from __future__ import annotations

import pytest

from tests.executors.fake_slurm import FakeSlurm
from tvrl_bench.executors.slurm_commands import FinalState, QueuedJob, SlurmClient, gpus_in, minutes


@pytest.mark.parametrize("text, expected", [("30", 30), ("1:30", 2), ("4:00:00", 240), ("1-00:00:00", 1440),
                                            ("2-12", 3600), ("UNLIMITED", None), ("infinite", None)])
def test_slurm_times_in_minutes(text, expected):
    assert minutes(text) == expected


@pytest.mark.parametrize("text", ["soon", "1:2:3:4", "-5", "", "1-x"])
def test_other_times_are_refused(text):
    with pytest.raises(ValueError):
        minutes(text)


@pytest.mark.parametrize("gres, gpus", [("(null)", 0), ("gpu:4", 4), ("gpu:a100:8(S:0-1)", 8),
                                        ("shard:2,gpu:h100:2", 2)])
def test_gpus_per_node_from_sinfo(gres, gpus):
    assert gpus_in(gres) == gpus


def test_queue_and_final_state_from_squeue_and_scontrol(tmp_path, monkeypatch):
    fake = FakeSlurm(tmp_path / "slurm").install(monkeypatch)
    fake.add_job("7", "tvrl.tiny.k", "RUNNING")
    client = SlurmClient()
    assert client.queue() == {"7": QueuedJob("7", "tvrl.tiny.k", "RUNNING", "None")}
    fake.set("7", "FAILED", 130)
    assert client.final_state("7") == FinalState("FAILED", 130, "None", 0)
    assert client.final_state("8") is None  # forgotten by the controller


def test_partitions_from_sinfo_one_line_per_node_kind(tmp_path, monkeypatch):
    FakeSlurm(tmp_path / "slurm", partitions="gpu*|1-00:00:00|2|64|gpu:8\ngpu*|1-00:00:00|3|32|gpu:4\n").install(monkeypatch)
    (gpu,) = SlurmClient().partitions().values()
    assert (gpu.name, gpu.default, gpu.max_minutes, gpu.nodes, gpu.cpus_per_node, gpu.gpus_per_node) == \
        ("gpu", True, 1440, 5, 32, 4)  # all its nodes, its smallest node
