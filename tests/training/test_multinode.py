"""One trial over 2 "nodes" x 1 process on loopback (gloo): the same parameters as 2 processes on one node."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from tests.cli.test_train import ROOT, bindings, digests, train
from tvrl_bench.training.launch import node_command


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_nodes_end_with_the_parameters_of_two_processes_on_one_node(tmp_path, tiny_policy_path):
    args = ["components/profiles/toy.gin", "--cpu", "--steps", "2", *bindings(tiny_policy_path),
            "--tracking-uri", f"sqlite:///{tmp_path / 'nodes.db'}", "--out", str(tmp_path / "nodes"), "--no-progress"]
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    nodes = [subprocess.Popen(node_command(args, 2, rank, "127.0.0.1", port), cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
    outputs = [node.communicate(timeout=900) for node in nodes]
    assert [node.returncode for node in nodes] == [0, 0], outputs[0][1][-3000:] + outputs[1][1][-3000:]
    node_digests = [d for _, err in outputs for d in digests(err)]
    assert len(node_digests) == 2 and node_digests[0] == node_digests[1]
    assert "rank 0/2" in outputs[0][1] and "rank 1/2" in outputs[1][1]

    launcher = node_command([], 1, 0, "127.0.0.1", free_port(), processes_per_machine=2)
    single = train(Path(tmp_path), "components/profiles/toy.gin", "--cpu", "--steps", "2",
                   *bindings(tiny_policy_path), launcher=launcher)
    assert single.returncode == 0, single.stderr[-3000:]
    assert digests(single.stderr)[0] == node_digests[0]
