"""The local executor: a pool of worker slots on this machine, one trial process per slot.

Signals: each trial runs in its own process group, so a Ctrl-C in the terminal reaches only the sweep driver,
which forwards one SIGTERM to each trial (`interrupt`): the trial stops at its next step boundary, checkpoints
and marks its run KILLED. On Linux a trial also dies with the driver (PR_SET_PDEATHSIG = SIGKILL): a driver
killed outright leaves no orphan that would later flip its run's status; the rerun resumes from the checkpoints.

One trial over several "nodes" (`--nodes-per-trial M --processes-per-node P`): the trial's slot starts M process
groups on this machine, each `accelerate launch` of one node (executors/nodes.py) joined on loopback at a free
port, with P of the slot's GPUs each where the machine has GPUs (gloo on the CPU otherwise). All M write to the
trial's log; the trial fails when any node fails (the others are stopped), and rank 0 marks its run as usual.
This runs the multi-node code path on one machine; real nodes are the Ray executor's (executors/ray_nodes.py).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import queue
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from tvrl_bench.config import ConfigError
from tvrl_bench.config.rules import Checks, integer, optional
from tvrl_bench.registry import register
from tvrl_bench.executors.base import NOT_STARTED, Executor, TrialCommand, worker_environment
from tvrl_bench.executors.nodes import check_layout, free_port, node_command, node_train_args, wait_for_nodes

_PR_SET_PDEATHSIG = 1


def visible_gpus() -> int:
    try:
        import torch

        return torch.cuda.device_count()
    except Exception:  # a CPU-only torch build
        return 0


def _die_with_parent_hook():
    """A preexec function that makes the child get SIGKILL when its parent dies (Linux), or None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)

    return hook


@register("executors", "local")
class LocalExecutor(Executor):
    """N worker slots; each trial gets cpus/N torch threads and, where GPUs exist, its own share of them.

    nodes_per_trial, processes_per_node: start each trial as that many node process groups on loopback (None:
    one tvrl-train process per trial, or accelerate over the slot's GPUs, as before).
    """

    CHECKS = Checks(workers=integer(1, example="2", note="--workers"), threads=optional(integer(1, example="1")))

    def __init__(self, workers: int = 2, threads: int | None = None, nodes_per_trial: int | None = None,
                 processes_per_node: int | None = None):
        self.workers = workers
        self.threads = threads or max(1, (os.cpu_count() or 1) // workers)
        self.nodes = None
        if nodes_per_trial is not None or processes_per_node is not None:
            self.nodes = (nodes_per_trial or 1, processes_per_node or 1)
            check_layout(*self.nodes)
        gpus = visible_gpus()
        per = max(1, gpus // workers) if gpus else 0
        if self.nodes and gpus:
            per = self.nodes[0] * self.nodes[1]
            if per * workers > gpus:
                raise ConfigError(
                    f"--nodes-per-trial {self.nodes[0]} x --processes-per-node {self.nodes[1]} x --workers {workers} "
                    f"needs {per * workers} GPUs, but this machine has {gpus}; lower one of them"
                )
        self.slots: queue.Queue = queue.Queue()
        for i in range(workers):
            self.slots.put([(i * per + j) % gpus for j in range(per)] if gpus else None)
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="trial")
        self.processes: set[subprocess.Popen] = set()
        self.stopping = False
        self._lock = threading.Lock()  # between starting a process and signalling the running ones
        self._preexec = _die_with_parent_hook()

    def submit(self, command: TrialCommand) -> Future:
        return self.pool.submit(self._run, command)

    def _run(self, command: TrialCommand) -> int:
        gpus = self.slots.get()
        if self.nodes:
            try:
                return self._run_nodes(command, gpus)
            finally:
                self.slots.put(gpus)
        try:
            env = worker_environment(command.env, self.threads, gpus)
            argv = command.argv(self.threads, len(gpus) if gpus else 0)
            log = open(command.log_path, "ab") if command.log_path else subprocess.DEVNULL
            try:
                with self._lock:
                    if self.stopping:
                        return NOT_STARTED
                    process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                               process_group=0, preexec_fn=self._preexec)
                    self.processes.add(process)
                code = process.wait()
                with self._lock:
                    self.processes.discard(process)
                return code
            finally:
                if command.log_path:
                    log.close()
        finally:
            self.slots.put(gpus)

    def _run_nodes(self, command: TrialCommand, gpus: list[int] | None) -> int:
        """The trial as `nodes` process groups joined on loopback; its exit code is `nodes.trial_code`'s."""
        nodes, per_node = self.nodes
        port = free_port("127.0.0.1")
        log = open(command.log_path, "ab") if command.log_path else subprocess.DEVNULL
        started = []
        try:
            with self._lock:
                if self.stopping:
                    return NOT_STARTED
                try:
                    for rank in range(nodes):
                        mine = gpus[rank * per_node:(rank + 1) * per_node] if gpus else None
                        args = node_train_args(command, self.threads, gpus=bool(gpus))
                        argv = node_command(args, nodes, rank, "127.0.0.1", port, per_node)
                        started.append(subprocess.Popen(argv, env=worker_environment(command.env, self.threads, mine),
                                                        stdout=log, stderr=subprocess.STDOUT, process_group=0,
                                                        preexec_fn=self._preexec))
                        self.processes.add(started[-1])
                except BaseException:  # a node that cannot start: the others would wait for it at the rendezvous
                    for process in started:
                        process.kill()
                    raise
            return wait_for_nodes(started)
        finally:
            with self._lock:
                self.processes.difference_update(started)
            if command.log_path:
                log.close()

    def interrupt(self) -> None:
        with self._lock:
            self.stopping = True
            for process in self.processes:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)

    def running(self) -> int:
        with self._lock:
            return sum(p.poll() is None for p in self.processes)

    def shutdown(self) -> None:
        self.interrupt()  # nothing runs after a normal end; after an error, trials checkpoint and stop
        self.pool.shutdown(wait=True, cancel_futures=True)
