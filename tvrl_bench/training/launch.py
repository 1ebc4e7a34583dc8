"""The command that starts one trial's process group on one node of a multi-node accelerate launch.

A trial over M nodes with P processes each runs `accelerate launch` once per node with the same main node address
and port, the node's rank and M * P processes in total; accelerate starts torchrun, which joins the nodes into one
process group (NCCL on GPUs, gloo with tvrl-train's --cpu). Rollouts, rewards and gradients are then shared
exactly as with several processes on one node (training/distributed.py).
"""

from __future__ import annotations

import sys
from typing import Sequence


def node_command(
    train_args: Sequence[str],
    num_machines: int,
    machine_rank: int,
    main_ip: str,
    main_port: int,
    processes_per_machine: int = 1,
) -> list[str]:
    """`accelerate launch ... -m tvrl_bench.cli.train TRAIN_ARGS` for node `machine_rank` of `num_machines`."""
    if num_machines < 1 or not 0 <= machine_rank < num_machines or processes_per_machine < 1:
        raise ValueError(
            f"need num_machines >= 1, 0 <= machine_rank < num_machines and processes_per_machine >= 1; got "
            f"{num_machines}, {machine_rank}, {processes_per_machine}"
        )
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
