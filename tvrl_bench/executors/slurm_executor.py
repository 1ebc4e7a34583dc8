"""The Slurm executor: each trial attempt one Slurm job (`tvrl-sweep --executor slurm`), its script from
slurm_script.py, submitted with sbatch and followed with squeue and scontrol (slurm_commands.py says why not
submitit); the settings are checked against the cluster before anything is submitted (slurm_checks.py).

What happens to a job, and what the sweep makes of it:
- it ends COMPLETED or FAILED: the trial's exit code, as with local processes (a failure is retried from its
  checkpoint up to --max-attempts, not after exit code 2);
- it hits its time limit (TIMEOUT) or its node fails: Slurm sent SIGTERM, the trial checkpointed; retried;
- it is requeued or preempted: Slurm starts it again by itself (SLURM_RESTART_COUNT + 1) and the trial resumes
  from its checkpoint in the same job; the sweep only waits;
- it is cancelled with `scancel` by someone else: the trial is FAILED with that reason, not retried;
- the sweep is stopped (Ctrl-C, SIGTERM): its jobs are left in the queue and named in one line (they go on; a
  rerun takes them over), or with `cancel_on_stop` pending jobs are cancelled and running ones get SIGTERM (they
  checkpoint and stop, as local trials do);
- the sweep is killed and rerun: jobs still queued or running are found by name (tvrl.<study>.<key>) and taken
  over, never submitted twice; finished trials are skipped by the driver as always.
"""

from __future__ import annotations

import logging
import math
import threading
from concurrent.futures import Future
from dataclasses import dataclass

from tvrl_bench.config import ConfigError
from tvrl_bench.executors.base import CANCELLED, LEFT_RUNNING, NOT_STARTED, Executor, TrialCommand
from tvrl_bench.executors.nodes import check_layout
from tvrl_bench.executors.slurm_checks import check_cluster
from tvrl_bench.executors.slurm_commands import FINAL_STATES, FinalState, SlurmClient, SlurmCommandError
from tvrl_bench.executors.slurm_script import JOB_PREFIX, SlurmSettings, job_name, render
from tvrl_bench.registry import register

log = logging.getLogger("tvrl_bench.sweeps")

STOPPED = 130  # a trial stopped by a signal exits 128 + SIGINT (tvrl-train's INTERRUPTED)
LOST_AFTER = 3  # polls a job may be missing from both squeue and scontrol before it counts as lost


@dataclass
class _Job:
    command: TrialCommand
    future: Future
    started: bool = False  # seen RUNNING
    missing: int = 0  # consecutive polls that found it nowhere


@register("executors", "slurm")
class SlurmExecutor(Executor):
    """Each trial a Slurm job (`--executor slurm`): sbatch, squeue and scontrol, requeue-safe, resumable.

    partition, time_limit, mem: sbatch's --partition, --time, --mem (None: the cluster's default);
    cpus_per_trial: CPUs per node of a trial; gpus_per_node: None takes the trial's training.trial.num_gpus;
    nodes_per_trial, processes_per_node: a trial over several nodes (srun + accelerate launch per node);
    sbatch_lines: extra #SBATCH options; setup: a shell line run before the trial; cancel_on_stop: on Ctrl-C or
    SIGTERM cancel the jobs instead of leaving them queued; trial_gpus: the most GPUs a trial asks for (set by
    tvrl-sweep, checked against the partition); poll_s: seconds between squeue polls.
    """

    def __init__(self, partition: str | None = None, time_limit: str | None = None, cpus_per_trial: float = 1.0,
                 threads: int | None = None, mem: str | None = None, gpus_per_node: int | None = None,
                 nodes_per_trial: int | None = None, processes_per_node: int | None = None,
                 sbatch_lines: list[str] = (), setup: str = "", cancel_on_stop: bool = False, trial_gpus: int = 0,
                 poll_s: float = 5.0, client: SlurmClient | None = None):
        if isinstance(cpus_per_trial, bool) or cpus_per_trial < 1 or cpus_per_trial != math.floor(cpus_per_trial):
            raise ConfigError(f"--cpus-per-trial {cpus_per_trial}: Slurm allocates whole CPUs; give 1 or more")
        if nodes_per_trial is not None or processes_per_node is not None:
            check_layout(nodes_per_trial or 1, processes_per_node or 1)
        if gpus_per_node is not None and gpus_per_node < 0:
            raise ConfigError(f"--gpus-per-node {gpus_per_node}: give 0 (CPU only) or more GPUs")
        cpus = int(cpus_per_trial)
        self.settings = SlurmSettings(partition, time_limit, cpus, threads or cpus, mem, gpus_per_node,
                                      nodes_per_trial or 1, processes_per_node, tuple(sbatch_lines), setup)
        self.client = client or SlurmClient()
        check_cluster(self.settings, self.client, trial_gpus)
        self.cancel_on_stop = cancel_on_stop
        self.poll_s = poll_s
        self.jobs: dict[str, _Job] = {}
        self.cancelled: set[str] = set()  # jobs this sweep cancelled (not someone's scancel)
        self.earlier: dict[str, dict[str, str]] = {}  # study -> {trial key: live job id from an earlier sweep}
        self.stopping = False
        self._lock = threading.RLock()  # interrupt() runs in a signal handler of the thread that may hold it
        self._closed = threading.Event()
        self._poller = threading.Thread(target=self._poll_loop, name="slurm-poll", daemon=True)
        self._poller.start()

    def script(self, command: TrialCommand) -> str:
        """The sbatch script of a trial attempt (what --dry-run prints)."""
        return render(command, self.settings)

    def live_trials(self, study: str) -> set[str]:
        if study not in self.earlier:
            prefix = f"{JOB_PREFIX}.{study}."
            try:
                queue = self.client.queue()
            except SlurmCommandError as exc:
                raise ConfigError(f"--executor slurm: {exc}; check that the Slurm controller answers (`squeue`)") from None
            self.earlier[study] = {job.name[len(prefix):]: job.job_id for job in queue.values()
                                   if job.name.startswith(prefix) and job.state not in FINAL_STATES}
        return set(self.earlier[study])

    def submit(self, command: TrialCommand) -> Future:
        future: Future = Future()
        with self._lock:
            if self.stopping:
                future.set_result(NOT_STARTED)
                return future
            earlier = self.earlier.get(command.study, {}).pop(command.key, None)
            if earlier is not None:
                job_id = earlier
                log.info("trial %s: following Slurm job %s, queued by an earlier sweep", command.key, job_id)
            else:
                try:
                    job_id = self.client.submit(self.script(command))
                except SlurmCommandError as exc:  # a QOS or account limit, a controller down: the driver retries
                    _note(command, f"sbatch refused the trial's job: {exc}")
                    future.set_result(1)
                    return future
                log.info("trial %s: Slurm job %s (%s)", command.key, job_id, job_name(command.study, command.key))
                _note(command, f"submitted as Slurm job {job_id}", prefix="slurm: ")
            self.jobs[job_id] = _Job(command, future)
            if self.stopping:  # a stop arrived while sbatch ran (its handler runs in this thread): this job too
                self._stop({job_id: self.jobs[job_id]}, hard=False)
        return future

    def _poll_loop(self) -> None:
        while not self._closed.wait(self.poll_s):
            with self._lock:
                if not self.jobs:
                    continue
            try:
                self.poll()
            except SlurmCommandError as exc:  # the controller busy or restarting: ask again at the next poll
                log.warning("squeue: %s; asking again in %.0f s", exc, self.poll_s)

    def poll(self) -> None:
        """Look at every followed job once; resolve the futures of those that ended."""
        with self._lock:
            followed = list(self.jobs.items())  # before squeue: a job submitted after it is looked at next time
        queue = self.client.queue()
        for job_id, job in followed:
            queued = queue.get(job_id)
            if queued is not None and queued.state not in FINAL_STATES:
                job.started = job.started or queued.state == "RUNNING"
                job.missing = 0
                continue
            final = self.client.final_state(job_id)
            if final is not None and final.state not in FINAL_STATES:
                continue  # squeue and scontrol asked a moment apart: it is still Slurm's
            if final is None and queued is None:
                job.missing += 1
                if job.missing < LOST_AFTER:
                    continue
            if final is None and queued is not None:  # ended, but scontrol did not answer: squeue's state
                final = FinalState(queued.state, int(queued.state != "COMPLETED"), queued.reason, 0)
            self._resolve(job_id, job, final)

    def _resolve(self, job_id: str, job: _Job, final: FinalState | None) -> None:
        with self._lock:
            if self.jobs.pop(job_id, None) is None:
                return
        code, note = _outcome(job_id, final, job_id in self.cancelled, job.started, self.settings.time_limit)
        if note:
            _note(job.command, note)
        job.future.set_result(code)

    def interrupt(self) -> None:
        with self._lock:
            hard = self.stopping  # a second stop: cancel outright
            self.stopping = True
            followed = dict(self.jobs)
        self._stop(followed, hard)

    def _stop(self, followed: dict[str, _Job], hard: bool) -> None:
        """Leave the jobs queued (saying so), or with cancel_on_stop cancel the pending ones and send SIGTERM to
        the running ones (`hard`: cancel every one)."""
        if not followed:
            return
        if not self.cancel_on_stop:
            with self._lock:  # not those the poller resolved meanwhile
                followed = {i: job for i, job in followed.items() if self.jobs.pop(i, None) is not None}
            if followed:
                self._leave(followed)
            return
        pending = [i for i, job in followed.items() if not job.started]
        running = [i for i, job in followed.items() if job.started]
        self.cancelled.update(followed if hard else pending)
        try:
            self.client.cancel(pending)
            self.client.cancel(running, signal=None if hard else "TERM")
        except SlurmCommandError as exc:
            log.error("could not cancel the sweep's Slurm jobs: %s; cancel them with scancel %s", exc,
                      " ".join(followed))

    def _leave(self, followed: dict[str, _Job]) -> None:
        ids = " ".join(followed)
        log.warning("left %d Slurm job(s) in the queue (%s): they run on without this sweep; rerun the same command "
                    "to follow them (it takes them over), or cancel them: scancel %s (--cancel-on-stop does that on "
                    "a stop)", len(followed), ids, ids)
        for job in followed.values():
            job.future.set_result(LEFT_RUNNING)

    def shutdown(self) -> None:
        """Stop polling; jobs still followed (the sweep ended on an error) are left queued, or cancelled with
        cancel_on_stop."""
        if self.jobs:
            self.interrupt()
        self._closed.set()
        self._poller.join(timeout=self.poll_s + 60)


def _outcome(job_id: str, final: FinalState | None, ours: bool, started: bool,
             time_limit: str | None) -> tuple[int, str | None]:
    """(the exit code the driver sees, a line for the trial's log saying what Slurm did) for an ended job."""
    if final is None:
        return 1, f"Slurm job {job_id} left the queue without a final state (the controller forgot it); retried"
    state, reason = final.state, final.reason
    if state == "COMPLETED":
        return final.exit_code, None
    if state == "FAILED":  # the trial's own error line is in its log
        return final.exit_code or 1, None
    if state == "CANCELLED" and ours:
        return (STOPPED if started else NOT_STARTED), None
    if state == "CANCELLED":
        return CANCELLED, (f"Slurm job {job_id} was cancelled (scancel) while the trial "
                           f"{'ran' if started else 'waited in the queue'}; the trial is FAILED and not retried; "
                           "rerun the sweep to run it again from its checkpoint")
    if state == "TIMEOUT":
        return 1, (f"Slurm job {job_id} hit its time limit ({time_limit or 'the partition default'}); the trial "
                   "checkpointed on SIGTERM and its next attempt resumes from there")
    return 1, f"Slurm job {job_id} ended {state} (reason {reason}); the next attempt resumes from the checkpoint"


def _note(command: TrialCommand, text: str, prefix: str = "tvrl-sweep: ") -> None:
    """Append a line to the trial attempt's log (`tvrl-sweep: ...` lines are the failure reason the sweep
    records, as a trial's own `tvrl-train: ...` line)."""
    if command.log_path:
        with open(command.log_path, "a") as log_file:
            log_file.write(f"{prefix}{text}\n")
