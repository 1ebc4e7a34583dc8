"""One trial over several nodes: the per-node `accelerate launch` commands, and waiting for a trial's nodes.

A trial over M nodes with P processes each runs `accelerate launch` once per node with the same main node address and
port, the node's rank and M * P processes in total; accelerate starts torchrun, which joins the nodes into one
process group (NCCL on GPUs, gloo on the CPU). Rollouts, rewards and gradients are then shared exactly as with
several processes on one node (training/processes.py), and only rank 0 (on node 0) logs the trial's MLflow
run.

`tvrl-sweep --nodes-per-trial M --processes-per-node P` starts each trial this way: the local executor as M node
process groups on loopback (executors/local.py), the Ray executor as M tasks on M distinct nodes
(executors/ray_nodes.py). A trial fails when any of its nodes fails: the others are given `GRACE_S` seconds to fail
on their own (a dead peer breaks their collectives), then SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from typing import Sequence

from tvrl_bench.config import ConfigError
from tvrl_bench.executors.base import TrialCommand

GRACE_S = 60.0  # how long the other nodes of a failed trial get to exit on their own, then to checkpoint
USAGE_ERROR = 2  # tvrl-train's exit code for a mistake in the config: a sweep does not retry it


def check_layout(nodes: int, processes_per_node: int) -> None:
    """ConfigError (a ValueError: one line, exit code 2) naming the flag unless both counts are integers >= 1."""
    for flag, value in (("--nodes-per-trial", nodes), ("--processes-per-node", processes_per_node)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{flag} {value}: give 1 or more (a trial runs on nodes x processes-per-node processes)")


def node_command(
    train_args: Sequence[str],
    num_machines: int,
    machine_rank: int,
    main_ip: str,
    main_port: int,
    processes_per_machine: int = 1,
) -> list[str]:
    """`accelerate launch ... -m tvrl_bench.cli.train TRAIN_ARGS` for node `machine_rank` of `num_machines`
    (one process in all needs no launcher, and accelerate refuses `--multi_gpu` for it: plain tvrl-train)."""
    if num_machines < 1 or not 0 <= machine_rank < num_machines or processes_per_machine < 1:
        raise ValueError(
            f"need num_machines >= 1, 0 <= machine_rank < num_machines and processes_per_machine >= 1; got "
            f"{num_machines}, {machine_rank}, {processes_per_machine}"
        )
    if num_machines * processes_per_machine == 1:
        return [sys.executable, "-m", "tvrl_bench.cli.train", *train_args]
    return [
        sys.executable, "-m", "accelerate.commands.launch",
        "--multi_gpu",
        "--num_machines", str(num_machines),
        "--machine_rank", str(machine_rank),
        "--main_process_ip", main_ip,
        "--main_process_port", str(main_port),
        "--num_processes", str(num_machines * processes_per_machine),
        "--mixed_precision", "no",
        "--dynamo_backend", "no",
        "-m", "tvrl_bench.cli.train",
        *train_args,
    ]


def node_train_args(command: TrialCommand, threads: int, gpus: bool) -> list[str]:
    """tvrl-train's arguments on each node: the trial's, plus `--cpu` when its processes get no GPU (accelerate
    joins CPU processes into one gloo group only when told to run on the CPU)."""
    return command.train_args(threads) + ([] if gpus else ["--cpu"])


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at `host` now (for the main node's rendezvous)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def trial_code(codes: Sequence[int], first_failure: int | None = None) -> int:
    """One exit code for a trial from its nodes' exit codes: a usage error anywhere (a sweep does not retry it),
    else the failure seen first (`first_failure`; the nodes stopped after it exit with a signal's code), else the
    first failing node's, else 0."""
    failures = [c for c in codes if c != 0]
    if USAGE_ERROR in failures:
        return USAGE_ERROR
    if first_failure is not None:
        return first_failure
    return failures[0] if failures else 0


def wait_for_nodes(processes: Sequence[subprocess.Popen], grace_s: float = GRACE_S, poll_s: float = 0.5) -> int:
    """Wait for every node process of a trial; after the first failure give the rest `grace_s` to exit, then
    SIGTERM (they checkpoint if they can), then after another `grace_s` SIGKILL. Returns `trial_code`."""
    failed_at = first = None
    terminated = False
    while True:
        codes = [p.poll() for p in processes]
        if all(c is not None for c in codes):
            return trial_code(codes, first)
        if failed_at is None and any(c not in (None, 0) for c in codes):
            failed_at, first = time.monotonic(), next(c for c in codes if c not in (None, 0))
        if failed_at is not None:
            waited = time.monotonic() - failed_at
            for p in processes:
                if p.poll() is None and not terminated and waited > grace_s:
                    p.send_signal(signal.SIGTERM)
                elif p.poll() is None and waited > 2 * grace_s:
                    p.kill()
            terminated = terminated or waited > grace_s
        time.sleep(poll_s)
