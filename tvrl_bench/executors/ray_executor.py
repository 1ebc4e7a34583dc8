"""The Ray executor: each trial is a Ray task that runs tvrl-train on whichever node has the resources.

Nodes need the same checkout (or installed package) at the same path; trials read their presets from it and
log to the sweep's tracking URI (use an HTTP tracking server on a multi-node cluster).

With `--nodes-per-trial M` (and `--processes-per-node P`) each trial runs over M distinct nodes instead: a
placement group per trial and one `accelerate launch` task per node (executors/ray_nodes.py).
"""

from __future__ import annotations

import subprocess
from concurrent.futures import Future, ThreadPoolExecutor

from tvrl_bench.registry import register
from tvrl_bench.executors.base import NOT_STARTED, Executor, TrialCommand, worker_environment
from tvrl_bench.executors.nodes import check_layout
from tvrl_bench.executors.ray_nodes import RayNodeTrials


def _run_trial_task(argv: list[str], env: dict[str, str], log_path: str | None) -> int:
    """Run one trial process; a cancelled task (the sweep was stopped) forwards SIGTERM and waits for the trial
    to checkpoint and exit."""
    import os
    import signal

    gpu_ids = os.environ.get("CUDA_VISIBLE_DEVICES")  # set by Ray from the task's num_gpus
    env = {**env, **({"CUDA_VISIBLE_DEVICES": gpu_ids} if gpu_ids is not None else {})}
    log = open(log_path, "ab") if log_path else subprocess.DEVNULL
    try:
        process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
        while True:
            try:
                return process.wait()
            except KeyboardInterrupt:  # ray.cancel
                process.send_signal(signal.SIGTERM)
    finally:
        if log_path:
            log.close()


@register("executors", "ray")
class RayExecutor(Executor):
    """Trials as Ray tasks on a cluster (`--executor ray --address HOST:PORT`), each asking for its resources.

    nodes_per_trial, processes_per_node: run each trial over that many distinct nodes, that many processes on each
    (cpus_per_trial is then per node); None: one task per trial, accelerate over its num_gpus GPUs.
    """

    def __init__(self, address: str = "auto", cpus_per_trial: float = 1.0, threads: int = 1,
                 nodes_per_trial: int | None = None, processes_per_node: int | None = None):
        import ray

        layout = None
        if nodes_per_trial is not None or processes_per_node is not None:
            layout = (nodes_per_trial or 1, processes_per_node or 1)
            check_layout(*layout)
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        self.ray = ray
        self.cpus_per_trial = cpus_per_trial
        self.threads = threads
        self.task = ray.remote(_run_trial_task)
        self.refs: list = []
        nodes = layout[0] if layout else 1
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1) // (cpus_per_trial * nodes)))
        self.nodes = None
        if layout:
            self.nodes = RayNodeTrials(ray, self.task, *layout, cpus_per_trial, threads)
            # one thread per trial in flight: run() blocks until its trial ends (placement waits in Ray's queue)
            self.pool = ThreadPoolExecutor(max_workers=max(32, self.workers), thread_name_prefix="trial-nodes")

    def submit(self, command: TrialCommand) -> Future:
        if self.nodes is not None:
            return self.pool.submit(self.nodes.run, command)
        env = worker_environment(command.env, self.threads, None)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        argv = command.argv(self.threads, command.num_gpus)
        ref = self.task.options(num_cpus=self.cpus_per_trial, num_gpus=command.num_gpus).remote(argv, env, command.log_path)
        self.refs.append(ref)
        future = ref.future()
        return _not_started_if_cancelled(future)

    def interrupt(self) -> None:
        if self.nodes is not None:
            self.nodes.stopping.set()  # node trials cancel their tasks; unplaced ones never start
        for ref in self.refs:
            try:
                self.ray.cancel(ref)  # a queued task never starts; a running one gets KeyboardInterrupt
            except Exception:  # already finished
                pass

    def shutdown(self) -> None:
        if self.nodes is not None:
            self.nodes.stopping.set()
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.ray.shutdown()


def _not_started_if_cancelled(future: Future) -> Future:
    """A future of the exit code: NOT_STARTED for a task cancelled before it ran."""
    outer: Future = Future()

    def done(inner: Future) -> None:
        try:
            outer.set_result(inner.result())
        except Exception as exc:
            if "Cancel" in type(exc).__name__:  # ray's TaskCancelledError: stopped before an exit code
                outer.set_result(NOT_STARTED)
            else:
                outer.set_exception(exc)

    future.add_done_callback(done)
    return outer
