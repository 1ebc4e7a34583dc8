"""Fake Slurm commands for unit tests: real executables (sbatch, squeue, scontrol, scancel, sinfo) written into a
folder put first on PATH, keeping their jobs as JSON files that a test reads and moves from state to state.

`FakeSlurm.set(job_id, state, exit_code)` plays the controller; `submitted()` lists the scripts sbatch got and
`cancels()` the scancel command lines.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

PROGRAM = r'''
import json, os, sys
from pathlib import Path

state = Path(os.environ["FAKE_SLURM_DIR"])
jobs = state / "jobs"
name = Path(sys.argv[0]).name
args = sys.argv[1:]
with open(state / "calls.log", "a") as calls:
    calls.write(" ".join([name, *args]) + "\n")


def load(job_id):
    return json.loads((jobs / f"{job_id}.json").read_text())


if name == "sinfo":
    print((state / "sinfo.txt").read_text(), end="")
elif name == "sbatch":
    if (state / "refuse").exists():
        sys.exit("sbatch: error: " + (state / "refuse").read_text())
    script = sys.stdin.read()
    job_id = str(len(list(jobs.glob("*.json"))) + 101)
    job_name = next(line.split("=", 1)[1] for line in script.splitlines() if line.startswith("#SBATCH --job-name="))
    record = {"name": job_name, "state": "PENDING", "exit": 0, "reason": "None", "script": script}
    (jobs / f"{job_id}.json").write_text(json.dumps(record))
    print(job_id)
elif name == "squeue":
    for path in sorted(jobs.glob("*.json")):
        job = json.loads(path.read_text())
        print(f"{path.stem}|{job['name']}|{job['state']}|{job['reason']}")
elif name == "scontrol":
    job_id = args[-1]
    if not (jobs / f"{job_id}.json").exists():
        sys.exit("slurm_load_jobs error: Invalid job id specified")
    job = load(job_id)
    print(f"JobId={job_id} JobName={job['name']} JobState={job['state']} Reason={job['reason']} Restarts=0 "
          f"ExitCode={job['exit']}:0")
elif name == "scancel":
    if not any(a.startswith("--signal") for a in args):
        for job_id in args:
            job = load(job_id)
            job["state"] = "CANCELLED"
            (jobs / f"{job_id}.json").write_text(json.dumps(job))
'''

NAMES = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")
PARTITIONS = "debug*|1:00:00|2|4|(null)\ngpu|2-00:00:00|4|16|gpu:a100:4(S:0-1)\n"


class FakeSlurm:
    """The fake commands in `folder/bin`, their state in `folder` (see the module doc)."""

    def __init__(self, folder: Path, partitions: str = PARTITIONS, only: tuple[str, ...] = NAMES):
        self.folder = folder
        (folder / "jobs").mkdir(parents=True, exist_ok=True)
        (folder / "bin").mkdir(exist_ok=True)
        (folder / "sinfo.txt").write_text(partitions)
        (folder / "calls.log").touch()
        for name in only:
            path = folder / "bin" / name
            path.write_text(f"#!{sys.executable}\n{PROGRAM}")
            path.chmod(0o755)

    def environment(self, path: str = "/usr/bin:/bin") -> dict[str, str]:
        """PATH with the fakes first (and nothing else that is Slurm's), and the fakes' state folder."""
        return {"PATH": f"{self.folder / 'bin'}:{path}", "FAKE_SLURM_DIR": str(self.folder)}

    def install(self, monkeypatch) -> "FakeSlurm":
        for name, value in self.environment(os.path.dirname(sys.executable) + ":/usr/bin:/bin").items():
            monkeypatch.setenv(name, value)
        return self

    def set(self, job_id: str, state: str, exit_code: int = 0, reason: str = "None") -> None:
        path = self.folder / "jobs" / f"{job_id}.json"
        job = json.loads(path.read_text())
        job.update(state=state, exit=exit_code, reason=reason)
        path.write_text(json.dumps(job))

    def add_job(self, job_id: str, name: str, state: str) -> None:
        """A job queued by someone else (or an earlier sweep)."""
        record = {"name": name, "state": state, "exit": 0, "reason": "None", "script": ""}
        (self.folder / "jobs" / f"{job_id}.json").write_text(json.dumps(record))

    def submitted(self) -> list[str]:
        """The scripts sbatch received, in order."""
        paths = sorted(self.folder.glob("jobs/*.json"), key=lambda p: int(p.stem))
        return [s for s in (json.loads(p.read_text())["script"] for p in paths) if s]

    def calls(self, name: str) -> list[str]:
        lines = (self.folder / "calls.log").read_text().splitlines()
        return [line for line in lines if line.split(" ", 1)[0] == name]
