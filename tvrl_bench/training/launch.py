"""The command that starts one trial's process group on one node of a multi-node accelerate launch.

A trial over M nodes with P processes each runs `accelerate launch` once per node with the same main node address
and port, the node's rank and M * P processes in total; accelerate starts torchrun, which joins the nodes into one
process group (NCCL on GPUs, gloo with tvrl-train's --cpu). Rollouts, rewards and gradients are then shared
exactly as with several processes on one node (training/distributed.py).

The command is built in `executors/nodes.py` (tvrl-sweep's executors start multi-node trials with it, and the
executors sit below the trainer); this module keeps its name for starting a trial's nodes by hand.
"""

from __future__ import annotations

from tvrl_bench.executors.nodes import free_port, node_command

__all__ = ["free_port", "node_command"]
