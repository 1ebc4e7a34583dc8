"""Slurm's own command-line tools, called directly: `sbatch` submits, `squeue` lists the queue, `scontrol show job`
gives a finished job's state and exit code, `scancel` cancels or signals, `sinfo` describes the partitions.

Not submitit: submitit reads a job's state with `sacct`, which answers only where Slurm keeps accounting storage
(slurmdbd), and many clusters (and every one-node test cluster) run without it. `squeue` and `scontrol` answer
everywhere: the controller keeps a finished job, with its state and exit code, for MinJobAge (300 s by default),
and the executor polls far more often than that.
"""

from __future__ import annotations

import getpass
import shutil
import subprocess
from dataclasses import dataclass

# States in which a job will not run again by itself. Every other state (PENDING, RUNNING, REQUEUED,
# COMPLETING, SUSPENDED, ...) means the job is still Slurm's: a requeued or preempted job goes back to PENDING.
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
                "DEADLINE", "PREEMPTED", "SPECIAL_EXIT", "REVOKED"}


class SlurmCommandError(RuntimeError):
    """A Slurm command failed; the message holds the command and its own error line."""


@dataclass(frozen=True)
class QueuedJob:
    """One line of `squeue`: the job's id, name, state and the reason it waits (or None)."""

    job_id: str
    name: str
    state: str
    reason: str


@dataclass(frozen=True)
class FinalState:
    """A job as `scontrol show job` reports it once it ended: state, exit code (128 + signal when killed by one),
    reason, and how often it was requeued."""

    state: str
    exit_code: int
    reason: str
    restarts: int


@dataclass(frozen=True)
class Partition:
    """A partition as `sinfo` reports it: time limit in minutes (None: unlimited), nodes, CPUs and GPUs per node."""

    name: str
    default: bool
    max_minutes: int | None
    nodes: int
    cpus_per_node: int
    gpus_per_node: int


class SlurmClient:
    """Runs Slurm's commands (each one short: a stuck controller fails a call after `timeout_s`)."""

    def __init__(self, timeout_s: float = 60.0):
        self.timeout_s = timeout_s
        self.user = getpass.getuser()

    @staticmethod
    def missing() -> list[str]:
        """The Slurm commands this executor needs that are not on PATH."""
        return [name for name in ("sbatch", "squeue", "scontrol", "scancel", "sinfo") if shutil.which(name) is None]

    def _run(self, *argv: str, stdin: str | None = None) -> str:
        try:
            done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            raise SlurmCommandError(f"`{' '.join(argv)}` did not answer within {self.timeout_s:.0f} s") from None
        if done.returncode != 0:
            error = (done.stderr.strip() or done.stdout.strip() or f"exit code {done.returncode}").splitlines()[-1]
            raise SlurmCommandError(f"`{' '.join(argv)}` failed: {error}")
        return done.stdout

    def submit(self, script: str) -> str:
        """sbatch the script (read from stdin); returns the job id."""
        return self._run("sbatch", "--parsable", stdin=script).strip().split(";")[0]

    def queue(self) -> dict[str, QueuedJob]:
        """This user's jobs the controller knows, finished ones included, by job id."""
        out = self._run("squeue", "--noheader", "--states=all", f"--user={self.user}", "--format=%i|%j|%T|%r")
        jobs = {}
        for line in out.splitlines():
            parts = line.strip().split("|")
            if len(parts) == 4:
                jobs[parts[0]] = QueuedJob(*parts)
        return jobs

    def final_state(self, job_id: str) -> FinalState | None:
        """The job's state, exit code and reason from `scontrol show job`, or None when the controller has
        forgotten it."""
        try:
            out = self._run("scontrol", "show", "job", "--oneliner", job_id)
        except SlurmCommandError:
            return None
        fields = dict(item.split("=", 1) for item in out.split() if "=" in item)
        if "JobState" not in fields:
            return None
        code, _, signal = fields.get("ExitCode", "0:0").partition(":")
        exit_code = int(code) if code.isdigit() else 1
        if exit_code == 0 and signal.isdigit() and int(signal):
            exit_code = 128 + int(signal)
        restarts = fields.get("Restarts", "0")
        return FinalState(fields["JobState"], exit_code, fields.get("Reason", "None"),
                          int(restarts) if restarts.isdigit() else 0)

    def cancel(self, job_ids: list[str], signal: str | None = None) -> None:
        """scancel the jobs; with `signal`, only send it to every process of each (they go on handling it)."""
        if job_ids:
            self._run("scancel", *([f"--signal={signal}", "--full"] if signal else []), *job_ids)

    def partitions(self) -> dict[str, Partition]:
        """Every partition, by name: its time limit, node count and the smallest node's CPUs and GPUs."""
        out = self._run("sinfo", "--noheader", "--format=%P|%l|%D|%c|%G")
        found: dict[str, Partition] = {}
        for line in out.splitlines():
            parts = line.strip().split("|")
            if len(parts) != 5:
                continue
            name, limit, nodes, cpus, gres = parts
            default = name.endswith("*")
            name = name.rstrip("*")
            gpus = gpus_in(gres)
            old = found.get(name)
            partition = Partition(name, default, minutes(limit), int(nodes.rstrip("+") or 0),
                                  int(cpus.rstrip("+") or 0), gpus)
            if old is not None:  # one line per node kind: the partition's nodes in all, its smallest node
                partition = Partition(name, default, old.max_minutes, old.nodes + partition.nodes,
                                      min(old.cpus_per_node, partition.cpus_per_node),
                                      min(old.gpus_per_node, partition.gpus_per_node))
            found[name] = partition
        return found


def gpus_in(gres: str) -> int:
    """GPUs per node in a `sinfo %G` field (`gpu:4`, `gpu:a100:8(S:0-1)`, `(null)`)."""
    for item in gres.split(","):
        parts = item.split("(")[0].split(":")
        if parts[0] == "gpu" and parts[-1].isdigit():
            return int(parts[-1])
    return 0


def minutes(limit: str) -> int | None:
    """Minutes in a Slurm time (`MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS`); None for
    `infinite`/`UNLIMITED`; ValueError for anything else. Seconds round up to a whole minute."""
    text = limit.strip()
    if text.lower() in ("infinite", "unlimited"):
        return None
    days, _, rest = text.rpartition("-")
    parts = rest.split(":")
    has_days = "-" in text
    if not rest or len(parts) > 3 or not all(p.isdigit() for p in parts) or (has_days and not days.isdigit()):
        raise ValueError(f"not a Slurm time: {limit!r}")
    numbers = [int(p) for p in parts]
    if has_days:  # D-HH, D-HH:MM, D-HH:MM:SS
        hours, mins, secs = (numbers + [0, 0])[:3]
        return int(days) * 1440 + hours * 60 + mins + (1 if secs else 0)
    if len(numbers) == 3:
        return numbers[0] * 60 + numbers[1] + (1 if numbers[2] else 0)
    if len(numbers) == 2:
        return numbers[0] + (1 if numbers[1] else 0)
    return numbers[0]
