"""A real one-node Slurm cluster for a test: Debian's slurm-wlm and munge (installed with apt when missing; that
needs root), a slurm.conf in a temporary folder (no cgroups: proctrack/linuxproc, task/none; no accounting
storage), and munged, slurmctld and slurmd started in the foreground, so the test stops exactly the processes it
started, by their pids."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

from tvrl_bench.executors.nodes import free_port

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo", "srun")


def install_slurm() -> None:
    """apt-get install slurm-wlm and munge unless their programs are all there (as root)."""
    if all(shutil.which(p) or Path(f"/usr/sbin/{p}").exists() for p in (*DAEMONS, *CLIENTS)):
        return
    assert os.geteuid() == 0, "the real-Slurm test installs slurm-wlm and munge with apt-get: run it as root"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, capture_output=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "slurm-wlm", "munge"], check=True, env=env, capture_output=True)


def write_config(folder: Path, cpus: int = 2) -> Path:
    """slurm.conf (and a munge key) for one node, this host, with `cpus` CPUs and one partition `debug`."""
    host = socket.gethostname().split(".")[0]
    for sub in ("state", "spool", "munge"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "munge").chmod(0o700)
    key = folder / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    conf = folder / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=tvrltest", f"SlurmctldHost={host}", "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={folder / 'munge' / 'munge.sock'}",
        f"StateSaveLocation={folder / 'state'}", f"SlurmdSpoolDir={folder / 'spool'}",
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}", f"SlurmdPidFile={folder / 'slurmd.pid'}",
        f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "MpiDefault=none", "ReturnToService=2",
        "SchedulerType=sched/backfill", "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
        "SlurmdParameters=config_overrides", "KillWait=10",
        "AccountingStorageType=accounting_storage/none", "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/none",
        f"SlurmctldLogFile={folder / 'slurmctld.log'}", f"SlurmdLogFile={folder / 'slurmd.log'}",
        f"NodeName={host} CPUs={cpus} State=UNKNOWN",
        "PartitionName=debug Nodes=ALL Default=YES MaxTime=60 State=UP",
    ]) + "\n")
    return conf


@contextmanager
def slurm_cluster(folder: Path):
    """Start a one-node cluster configured in `folder`; yields the environment its commands need (SLURM_CONF);
    stops the three daemons it started (SIGTERM, then SIGKILL) on the way out."""
    assert os.geteuid() == 0, "the real-Slurm test runs its daemons as root (SlurmUser=root): run it as root"
    install_slurm()
    conf = write_config(folder)
    munge = folder / "munge"
    env = {**os.environ, "SLURM_CONF": str(conf)}
    commands = [
        ["munged", "--foreground", "--force", f"--socket={munge / 'munge.sock'}", f"--key-file={munge / 'munge.key'}",
         f"--pid-file={munge / 'munged.pid'}", f"--log-file={munge / 'munged.log'}", f"--seed-file={munge / 'seed'}"],
        ["slurmctld", "-D", "-i", "-f", str(conf)],
        ["slurmd", "-D", "-f", str(conf)],
    ]
    started: list[subprocess.Popen] = []
    try:
        for argv in commands:
            log = open(folder / f"{argv[0]}.out", "ab")
            started.append(subprocess.Popen([shutil.which(argv[0]) or f"/usr/sbin/{argv[0]}", *argv[1:]], env=env,
                                            stdout=log, stderr=subprocess.STDOUT))
            if argv[0] == "munged":
                _wait_for(lambda: (munge / "munge.sock").exists(), "munged's socket", folder)
        _wait_for(lambda: _node_idle(env), "the node to come up idle", folder)
        yield env
    finally:
        for process in reversed(started):
            process.terminate()
        for process in reversed(started):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _node_idle(env: dict) -> bool:
    done = subprocess.run(["sinfo", "--noheader", "--format=%T"], env=env, capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.strip() == "idle"


def _wait_for(ready, what: str, folder: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.2)
    logs = "".join((p.read_text(errors="replace")[-1500:] for p in folder.glob("*.log")))
    raise AssertionError(f"waited {timeout_s:.0f} s for {what}; logs:\n{logs}")
