"""Trials over several Ray nodes: one placement group per trial, one `accelerate launch` task per node.

For `tvrl-sweep --executor ray --nodes-per-trial M --processes-per-node P`, each trial gets a placement group of M
bundles with strategy STRICT_SPREAD (M distinct nodes), each bundle {"CPU": cpus_per_trial} plus {"GPU": P} when
the trial asks for GPUs (`training.trial.num_gpus > 0`; one GPU per process). When the group is placed, a probe
task in bundle 0 returns that node's IP and a free port on it: the main node's address. Then M tasks, task r in
bundle r, each run `executors/nodes.py::node_command` for node r (Ray sets CUDA_VISIBLE_DEVICES to the task's GPUs).
The trial fails when any node task fails: the other tasks are cancelled after `nodes.GRACE_S` seconds (a
cancelled task sends SIGTERM to its trial process and waits for it). The group is removed when the trial ends.

Nodes need the same checkout (or installed package) at the same path and `--out` on a file system they share (rank 0
writes the checkpoints, every process reads them to resume); each node task appends to the trial's log path on its
own node's file system.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from tvrl_bench.executors.base import NOT_STARTED, TrialCommand, worker_environment
from tvrl_bench.executors.nodes import GRACE_S, node_command, node_train_args, trial_code


def main_address() -> tuple[str, int]:
    """(IP of the node this runs on, a free port there): the probe task run in a trial's first bundle."""
    import ray

    from tvrl_bench.executors.nodes import free_port

    return ray.util.get_node_ip_address(), free_port("0.0.0.0")


def node_commands(command: TrialCommand, nodes: int, per_node: int, threads: int, main_ip: str, port: int) -> list[list[str]]:
    """The command of each of the trial's `nodes` node tasks, node 0 first (on the CPU when the trial asks for no
    GPUs)."""
    args = node_train_args(command, threads, gpus=command.num_gpus > 0)
    return [node_command(args, nodes, rank, main_ip, port, per_node) for rank in range(nodes)]


def node_bundles(nodes: int, per_node: int, cpus: float, gpus: bool) -> list[dict[str, float]]:
    """The placement group's bundles: one per node, its CPUs, and one GPU per process when the trial uses GPUs."""
    return [{"CPU": float(cpus), **({"GPU": float(per_node)} if gpus else {})} for _ in range(nodes)]


class RayNodeTrials:
    """Runs one trial over `nodes` Ray nodes (see the module doc); `run` blocks, so callers run it in a thread."""

    def __init__(self, ray: Any, task: Callable, nodes: int, per_node: int, cpus: float, threads: int,
                 grace_s: float = GRACE_S):
        self.ray, self.task = ray, task
        self.nodes, self.per_node, self.cpus, self.threads, self.grace_s = nodes, per_node, cpus, threads, grace_s
        self.probe = ray.remote(main_address)
        self.stopping = threading.Event()

    def run(self, command: TrialCommand) -> int:
        """The trial's exit code (`nodes.trial_code` of its node tasks), or NOT_STARTED if the sweep stopped
        before its nodes were placed."""
        from ray.util import placement_group, remove_placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        gpus = command.num_gpus > 0
        group = placement_group(node_bundles(self.nodes, self.per_node, self.cpus, gpus), strategy="STRICT_SPREAD")
        try:
            if not self._placed(group):
                return NOT_STARTED

            def bundle(rank: int) -> PlacementGroupSchedulingStrategy:
                return PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=rank)

            ip, port = self.ray.get(self.probe.options(num_cpus=self.cpus, scheduling_strategy=bundle(0)).remote())
            env = worker_environment(command.env, self.threads, None)
            env.pop("CUDA_VISIBLE_DEVICES", None)  # Ray sets each task's own
            refs = [
                self.task.options(num_cpus=self.cpus, num_gpus=self.per_node if gpus else 0,
                                  scheduling_strategy=bundle(rank)).remote(argv, env, command.log_path)
                for rank, argv in enumerate(node_commands(command, self.nodes, self.per_node, self.threads, ip, port))
            ]
            return self._wait(refs)
        finally:
            remove_placement_group(group)

    def _placed(self, group: Any) -> bool:
        """Wait until the group's bundles are reserved; False if the sweep stops first."""
        ready = group.ready()
        while not self.stopping.is_set():
            done, _ = self.ray.wait([ready], timeout=1.0)
            if done:
                return True
        return False

    def _wait(self, refs: list) -> int:
        """Every node task's exit code; after the first failure (or a stop) cancel the rest, after the grace."""
        codes: dict[int, int] = {}
        failed_at = cancelled_at = first = None
        while len(codes) < len(refs):
            pending = [r for i, r in enumerate(refs) if i not in codes]
            done, _ = self.ray.wait(pending, num_returns=1, timeout=1.0)
            for ref in done:
                codes[refs.index(ref)] = self._code(ref)
            now = time.monotonic()
            if failed_at is None and any(c != 0 for c in codes.values()):
                failed_at, first = now, next(c for c in codes.values() if c != 0)
            due = self.stopping.is_set() or (failed_at is not None and now - failed_at > self.grace_s)
            if due and cancelled_at is None:
                cancelled_at = now
                for ref in pending:
                    self._cancel(ref, force=False)  # the task forwards SIGTERM: the trial checkpoints and exits
            elif cancelled_at is not None and now - cancelled_at > self.grace_s:
                for ref in pending:
                    self._cancel(ref, force=True)
        return trial_code([codes[i] for i in range(len(refs))], first)

    def _code(self, ref: Any) -> int:
        try:
            return int(self.ray.get(ref))
        except Exception as exc:  # cancelled, or its worker died: the node failed
            return NOT_STARTED if "Cancel" in type(exc).__name__ and self.stopping.is_set() else 1

    def _cancel(self, ref: Any, force: bool) -> None:
        try:
            self.ray.cancel(ref, force=force)
        except Exception:  # already finished
            pass
