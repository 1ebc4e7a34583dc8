"""The local executor: a pool of worker slots on this machine, one trial process per slot."""

from __future__ import annotations

import os
import queue
import subprocess
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from tvrl_bench.registry import register
from tvrl_bench.sweep.executors.base import Executor, TrialCommand, worker_environment


def visible_gpus() -> int:
    try:
        import torch

        return torch.cuda.device_count()
    except Exception:  # a CPU-only torch build
        return 0


@register("executors", "local")
class LocalExecutor(Executor):
    """N worker slots; each trial gets cpus/N torch threads and, where GPUs exist, its own share of them."""

    def __init__(self, workers: int = 2, threads: int | None = None):
        if workers < 1:
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

    def submit(self, command: TrialCommand) -> Future:
        return self.pool.submit(self._run, command)

    def _run(self, command: TrialCommand) -> int:
        gpus = self.slots.get()
        try:
            env = worker_environment(command.env, self.threads, gpus)
            argv = command.argv(self.threads, len(gpus) if gpus else 0)
            log = open(command.log_path, "ab") if command.log_path else subprocess.DEVNULL
            try:
                process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=False)
                self.processes.add(process)
                code = process.wait()
                self.processes.discard(process)
                return code
            finally:
                if command.log_path:
                    log.close()
        finally:
            self.slots.put(gpus)

    def shutdown(self) -> None:
        for process in list(self.processes):
            process.terminate()
        self.pool.shutdown(wait=True, cancel_futures=True)


def log_file(folder: Path, key: str, attempt: int) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / f"{key}.attempt{attempt}.log")
