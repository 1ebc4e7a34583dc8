"""The local executor: a pool of worker slots on this machine, one trial process per slot.

Signals: each trial runs in its own process group, so a Ctrl-C in the terminal reaches only the sweep driver,
which forwards one SIGTERM to each trial (`interrupt`): the trial stops at its next step boundary, checkpoints
and marks its run KILLED. On Linux a trial also dies with the driver (PR_SET_PDEATHSIG = SIGKILL): a driver
killed outright leaves no orphan that would later flip its run's status; the rerun resumes from the checkpoints.
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

from tvrl_bench.registry import register
from tvrl_bench.executors.base import NOT_STARTED, Executor, TrialCommand, worker_environment

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
    """N worker slots; each trial gets cpus/N torch threads and, where GPUs exist, its own share of them."""

    def __init__(self, workers: int = 2, threads: int | None = None):
        if not isinstance(workers, int) or workers < 1:
            raise ValueError(f"--workers must be >= 1, got {workers}")
        self.workers = workers
        self.threads = threads or max(1, (os.cpu_count() or 1) // workers)
        gpus = visible_gpus()
        per = max(1, gpus // workers) if gpus else 0
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
