"""A trial's sbatch script: its #SBATCH options, and its command lines as bash expands them (one node: the trial
itself; several nodes: srun and one `accelerate launch` per node with its rank); a failing setup line."""

from __future__ import annotations

import shlex
import subprocess

from tvrl_bench.executors.base import TrialCommand
from tvrl_bench.executors.nodes import node_command
from tvrl_bench.executors.slurm_script import SlurmSettings, render

ARGS = ("components/profiles/toy_v1.gin", "--gin_bindings", "policies.toy.path = 'a b'", "--attempt", "2")
COMMAND = TrialCommand(ARGS, log_path="logs/k.attempt2.log", study="tiny", key="k")
TAGS = ["--tag", "tvrl.slurm_job_id=55", "--tag", "tvrl.slurm_restarts=1"]
SLURM_ENV = {"SLURM_JOB_ID": "55", "SLURM_RESTART_COUNT": "1", "SLURM_NODEID": "1", "TVRL_MAIN_IP": "node7",
             "TVRL_MAIN_PORT": "29500", "PATH": "/usr/bin:/bin"}


def expanded(line: str) -> list[str]:
    """The argv bash runs for `exec ...` (printed instead of run), with a node's Slurm environment."""
    shown = subprocess.run(["bash", "-c", "f() { printf '%s\\n' \"$@\"; }; " + line.replace("exec ", "f ", 1)],
                           env=SLURM_ENV, capture_output=True, text=True, check=True).stdout
    return shown.splitlines()


def test_options_name_the_job_log_resources_and_requeue(tmp_path):
    settings = SlurmSettings(partition="gpu", time_limit="4:00:00", cpus=8, threads=8, mem="64G",
                             sbatch_lines=("--account=lab", "#SBATCH --qos=high"))
    script = render(TrialCommand(ARGS, num_gpus=2, log_path="logs/k.log", study="tiny", key="k"), settings, "/w")
    options = [line.removeprefix("#SBATCH ") for line in script.splitlines() if line.startswith("#SBATCH ")]
    assert options == ["--job-name=tvrl.tiny.k", "--comment=tvrl-sweep:study=tiny,key=k", "--output=/w/logs/k.log",
                       "--open-mode=append", "--chdir=/w", "--export=ALL", "--requeue", "--nodes=1",
                       "--ntasks-per-node=1", "--cpus-per-task=8", "--partition=gpu", "--time=4:00:00", "--mem=64G",
                       "--gpus-per-node=2", "--account=lab", "--qos=high"]


def test_one_node_execs_the_trial_with_the_job_id_and_restart_count_as_tags():
    script = render(COMMAND, SlurmSettings(cpus=2, threads=2), "/w")
    (line,) = [line for line in script.splitlines() if line.startswith("exec ")]
    assert expanded(line) == [*COMMAND.argv(threads=2, gpus=0), *TAGS]


def test_several_nodes_run_accelerate_on_each_through_srun_with_the_nodes_rank():
    script = render(COMMAND, SlurmSettings(threads=1, nodes=3, processes_per_node=2), "/w")
    assert "#SBATCH --nodes=3" in script and "--gpus-per-node" not in script  # the trial asks for no GPUs
    (srun,) = [line for line in script.splitlines() if line.startswith("srun ")]
    words = shlex.split(srun)
    assert words[:5] == ["srun", "--nodes=3", "--ntasks-per-node=1", "--kill-on-bad-exit=1", "bash"]
    train = [*COMMAND.train_args(1), "--cpu", *TAGS]
    assert expanded(words[-1]) == node_command(train, 3, 1, "node7", 29500, 2)  # node 1 of 3, 6 processes
    assert 'TVRL_MAIN_IP="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"' in script


def test_gpus_per_node_follow_the_trial_unless_set():
    gpu_trial = TrialCommand(ARGS, num_gpus=1, study="s", key="k")
    assert SlurmSettings().gpus_for(gpu_trial) == 1
    assert SlurmSettings(nodes=2, processes_per_node=4).gpus_for(gpu_trial) == 4  # one per process
    assert SlurmSettings(nodes=2, processes_per_node=4).gpus_for(COMMAND) == 0
    assert SlurmSettings(gpus_per_node=0).gpus_for(gpu_trial) == 0


def test_a_failing_setup_line_ends_the_job_with_exit_2_and_says_which_line(tmp_path):
    script = render(COMMAND, SlurmSettings(setup="false"), str(tmp_path))
    path = tmp_path / "job.sh"
    path.write_text(script.replace("exec ", "echo ", 1))
    done = subprocess.run(["bash", str(path)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "tvrl-sweep: the setup line failed: false; fix it (--setup) and rerun" in done.stdout
