"""What `--executor slurm` refuses before anything is submitted, each one line naming the setting and the fix
(ConfigError: exit code 2): Slurm's commands missing, a partition the cluster does not have (or no default one),
a time limit that is not a Slurm time or longer than the partition allows (the job would wait forever), more
nodes, CPUs or GPUs per node than the partition's nodes have."""

from __future__ import annotations

from tvrl_bench.config import ConfigError
from tvrl_bench.executors.slurm_commands import Partition, SlurmClient, SlurmCommandError, minutes
from tvrl_bench.executors.slurm_script import SlurmSettings
from tvrl_bench.registry import suggest


def check_cluster(settings: SlurmSettings, client: SlurmClient, trial_gpus: int = 0) -> Partition:
    """The partition the trials go to, once every setting fits it (`trial_gpus`: the most GPUs a trial of the
    study asks for, training.trial.num_gpus)."""
    missing = client.missing()
    if missing:
        raise ConfigError(
            f"--executor slurm: {', '.join(missing)} not found on PATH; run tvrl-sweep on a machine of the Slurm "
            "cluster (a login node) with Slurm's client commands installed (Debian: apt-get install slurm-client)"
        )
    try:
        partitions = client.partitions()
    except SlurmCommandError as exc:
        raise ConfigError(f"--executor slurm: {exc}; check that the Slurm controller answers (`sinfo`, "
                          "$SLURM_CONF)") from None
    partition = _partition(settings.partition, partitions)
    _check_time(settings.time_limit, partition)
    if settings.nodes > partition.nodes:
        raise ConfigError(f"--nodes-per-trial {settings.nodes}: partition {partition.name} has {partition.nodes} "
                          f"node(s); ask for at most {partition.nodes} or name a larger partition (--partition)")
    if partition.cpus_per_node and settings.cpus > partition.cpus_per_node:
        raise ConfigError(f"--cpus-per-trial {settings.cpus}: the nodes of partition {partition.name} have "
                          f"{partition.cpus_per_node} CPUs; ask for at most {partition.cpus_per_node}")
    gpus = settings.gpus_per_node if settings.gpus_per_node is not None else (
        (settings.processes_per_node or 1) if settings.processes_per_node is not None and trial_gpus else trial_gpus)
    if gpus > partition.gpus_per_node:
        where = "no GPUs" if not partition.gpus_per_node else f"{partition.gpus_per_node} GPUs"
        source = (f"--gpus-per-node {gpus}" if settings.gpus_per_node is not None
                  else f"the trials' training.trial.num_gpus = {trial_gpus}")
        raise ConfigError(f"{source}: the nodes of partition {partition.name} have {where}; name a GPU partition "
                          "(--partition) or run the trials on the CPU (training.trial.num_gpus = 0, --gpus-per-node 0)")
    return partition


def _partition(name: str | None, partitions: dict[str, Partition]) -> Partition:
    listed = ", ".join(sorted(partitions)) or "none"
    if name is None:
        default = [p for p in partitions.values() if p.default]
        if not default:
            raise ConfigError(f"--partition: the cluster has no default partition; name one (partitions: {listed})")
        return default[0]
    if name not in partitions:
        raise ConfigError(f"--partition {name}: no such Slurm partition{suggest(name, partitions)} "
                          f"(partitions: {listed})")
    return partitions[name]


def _check_time(limit: str | None, partition: Partition) -> None:
    if limit is None:
        return
    try:
        wanted = minutes(limit)
    except ValueError:
        raise ConfigError(f"--time-limit {limit}: not a Slurm time; write MINUTES, HH:MM:SS or D-HH:MM:SS, "
                          "e.g. --time-limit 4:00:00") from None
    if wanted is not None and wanted < 1:
        raise ConfigError(f"--time-limit {limit}: a trial needs at least a minute; give e.g. --time-limit 4:00:00")
    allowed = partition.max_minutes
    if allowed is not None and (wanted is None or wanted > allowed):
        raise ConfigError(f"--time-limit {limit}: longer than partition {partition.name} allows ({allowed} min); "
                          f"the job would never start: give at most {allowed // 60}:{allowed % 60:02d}:00 (a trial "
                          "that needs longer resumes from its checkpoint in its next attempt) or another partition")
