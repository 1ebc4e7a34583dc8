"""A trial's sbatch script: its `#SBATCH` lines (name, log, resources, requeue) and the command that runs it.

One node, one process (the usual trial): the script execs tvrl-train itself, so a signal from Slurm (scancel,
the time limit, a requeue or preemption: SIGTERM, then SIGKILL after KillWait) reaches the trial, which
checkpoints at its next step boundary and marks its run KILLED. Over several nodes (`nodes_per_trial` M,
`processes_per_node` P): the script runs on the allocation's first node, takes that node's name and a free port
there as the main address, and `srun` starts one task per node, each `accelerate launch` of its node
(executors/nodes.py::node_command, its rank from $SLURM_NODEID), M x P processes in all; `--kill-on-bad-exit`
ends the trial when any node fails. Every line of output goes to the trial's log (`--open-mode=append`: a
requeued job's second start writes below its first). The job id and restart count are tags of the trial's run.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass, field

from tvrl_bench.executors.base import TrialCommand, worker_environment
from tvrl_bench.executors.nodes import node_command, node_train_args

JOB_PREFIX = "tvrl"  # job names are tvrl.<study>.<trial key>: a rerun of the sweep finds its jobs by them
RANK, MAIN_IP, MAIN_PORT = "@rank@", "@main_ip@", "@main_port@"  # filled in by the shell on each node
_SHELL_VALUES = {RANK: '"$SLURM_NODEID"', MAIN_IP: '"$TVRL_MAIN_IP"', MAIN_PORT: '"$TVRL_MAIN_PORT"'}
RUN_TAGS = ("--tag", "tvrl.slurm_job_id=${SLURM_JOB_ID}", "--tag", "tvrl.slurm_restarts=${SLURM_RESTART_COUNT:-0}")


@dataclass(frozen=True)
class SlurmSettings:
    """What each trial's job asks Slurm for (None: the cluster's default).

    cpus: CPUs per node of a trial; threads: torch threads per process; gpus_per_node: None takes the trial's own
    (training.trial.num_gpus on one node, one per process over several nodes when the trial uses GPUs);
    sbatch_lines: extra `#SBATCH` options, as `--account=abc`; setup: a shell line run before the trial (`module
    load cuda`, `source venv/bin/activate`).
    """

    partition: str | None = None
    time_limit: str | None = None
    cpus: int = 1
    threads: int = 1
    mem: str | None = None
    gpus_per_node: int | None = None
    nodes: int = 1
    processes_per_node: int | None = None
    sbatch_lines: tuple[str, ...] = field(default=())
    setup: str = ""

    def gpus_for(self, command: TrialCommand) -> int:
        """GPUs per node the trial's job asks for."""
        if self.gpus_per_node is not None:
            return self.gpus_per_node
        if self.processes_per_node is not None:
            return self.processes_per_node if command.num_gpus > 0 else 0
        return command.num_gpus


def job_name(study: str, key: str) -> str:
    return f"{JOB_PREFIX}.{study}.{key}"


def render(command: TrialCommand, settings: SlurmSettings, workdir: str | None = None) -> str:
    """The sbatch script of one trial attempt (the log path must be absolute or relative to `workdir`)."""
    workdir = workdir or os.getcwd()
    gpus = settings.gpus_for(command)
    options = [
        f"--job-name={job_name(command.study, command.key)}",
        f"--comment=tvrl-sweep:study={command.study},key={command.key}",
        f"--output={os.path.join(workdir, command.log_path or os.devnull)}",
        "--open-mode=append",
        f"--chdir={workdir}",
        "--export=ALL",
        "--requeue",
        f"--nodes={settings.nodes}",
        "--ntasks-per-node=1",
        f"--cpus-per-task={settings.cpus}",
        *([f"--partition={settings.partition}"] if settings.partition else []),
        *([f"--time={settings.time_limit}"] if settings.time_limit else []),
        *([f"--mem={settings.mem}"] if settings.mem else []),
        *([f"--gpus-per-node={gpus}"] if gpus else []),
        *(line.removeprefix("#SBATCH").strip() for line in settings.sbatch_lines),
    ]
    lines = ["#!/bin/bash", *(f"#SBATCH {option}" for option in options), ""]
    lines.append('echo "slurm: job ${SLURM_JOB_ID} on $(hostname), start $(( ${SLURM_RESTART_COUNT:-0} + 1 ))"')
    if settings.setup:  # a failed setup is a mistake in the settings: exit 2, not retried
        failed = shlex.quote(f"tvrl-sweep: the setup line failed: {settings.setup}; fix it (--setup) and rerun")
        lines.append(f"{{ {settings.setup}\n}} || {{ echo {failed}; exit 2; }}")
    env = worker_environment(command.env, settings.threads, None)
    exported = {k: v for k, v in env.items() if os.environ.get(k) != v}  # sbatch exports the rest (--export=ALL)
    lines += [f"export {k}={shlex.quote(v)}" for k, v in sorted(exported.items())]
    if settings.processes_per_node is None and settings.nodes == 1:
        argv = command.argv(settings.threads, gpus)
        lines.append("exec " + " ".join([*map(shlex.quote, argv), *RUN_TAGS]))
        return "\n".join(lines) + "\n"
    lines += _node_lines(command, settings, gpus)
    return "\n".join(lines) + "\n"


def _node_lines(command: TrialCommand, settings: SlurmSettings, gpus: int) -> list[str]:
    """The multi-node part: the main address, then one `accelerate launch` per node through srun."""
    per_node = settings.processes_per_node or 1
    args = [*node_train_args(command, settings.threads, gpus=gpus > 0), *RUN_TAGS]
    argv = node_command(args, settings.nodes, 0, MAIN_IP, 0, per_node)
    argv = [RANK if a == "0" and argv[i - 1] == "--machine_rank" else MAIN_PORT if argv[i - 1] == "--main_process_port"
            else a for i, a in enumerate(argv)]
    inner = " ".join(_SHELL_VALUES.get(a) or (a if a in RUN_TAGS else shlex.quote(a)) for a in argv)
    probe = "from tvrl_bench.executors.nodes import free_port; print(free_port('0.0.0.0'))"
    return [
        'export TVRL_MAIN_IP="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"',
        f'export TVRL_MAIN_PORT="$({shlex.quote(sys.executable)} -c {shlex.quote(probe)})"',
        f"srun --nodes={settings.nodes} --ntasks-per-node=1 --kill-on-bad-exit=1 "
        f"bash -c {shlex.quote('exec ' + inner)}",
    ]
