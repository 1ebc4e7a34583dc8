"""tvrl-sweep's executor flags (local, Ray, Slurm), building the executor from them and from gin bindings
(`--executor-config FILE.gin`, `--executor-binding B`: e.g. `executors.slurm.setup = 'module load cuda'`; a flag
given on the command line wins over a binding), and the sbatch script `--dry-run` prints for Slurm."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_executor_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=int, default=2, help="trials run at once by the local executor (default 2)")
    parser.add_argument("--threads", type=int, help="torch threads per trial (default: CPU cores / workers; Slurm: "
                        "its CPUs per trial)")
    parser.add_argument("--executor", default="local",
                        help="where trials run: a registered executor, `local` processes (default), `ray` (a Ray "
                        "cluster) or `slurm` (each trial a Slurm job); `tvrl-bench list executors` lists them. Each "
                        "gets the flags below that it takes")
    parser.add_argument("--executor-config", metavar="FILE.gin",
                        help="gin file of executor settings (executors.slurm.partition = 'gpu', executors.slurm.setup "
                        "= 'source venv/bin/activate', ...); flags given here win")
    parser.add_argument("--executor-binding", action="append", default=[], metavar="B",
                        help="one executor binding, e.g. \"executors.slurm.sbatch_lines = ['--account=abc']\"")
    parser.add_argument("--address", help="Ray cluster address HOST:PORT (with --executor ray; default auto)")
    parser.add_argument("--cpus-per-trial", type=float,
                        help="CPUs each trial asks for (default 1; per node with --nodes-per-trial): Ray's task "
                        "resources, Slurm's --cpus-per-task")
    parser.add_argument(
        "--nodes-per-trial", type=int, metavar="M",
        help="run each trial as one process group over M nodes (accelerate's multi-node launch, M x P processes "
        "in all): with --executor ray on M distinct nodes of the cluster (a STRICT_SPREAD placement group per "
        "trial), with --executor slurm as one job of M nodes (srun starts accelerate on each), with the local "
        "executor as M node process groups on this machine joined on loopback (a check of the multi-node path). "
        "Only rank 0 logs the trial's run; a trial fails if any node fails",
    )
    parser.add_argument(
        "--processes-per-node", type=int, metavar="P",
        help="processes of a trial on each node with --nodes-per-trial (default 1; one per GPU where the trial "
        "asks for GPUs with training.trial.num_gpus > 0)",
    )
    slurm = parser.add_argument_group("with --executor slurm (sbatch's options; default: the cluster's)")
    slurm.add_argument("--partition", help="the partition each trial's job goes to")
    slurm.add_argument("--time-limit", help="each job's time limit (sbatch --time: MINUTES, HH:MM:SS, D-HH:MM:SS); "
                       "a trial that hits it checkpoints and resumes in its next attempt")
    slurm.add_argument("--mem", help="memory per node (sbatch --mem, e.g. 64G)")
    slurm.add_argument("--gpus-per-node", type=int, help="GPUs per node (default: the trial's training.trial.num_gpus; "
                       "over several nodes one per process when the trial uses GPUs)")
    slurm.add_argument("--sbatch-line", action="append", metavar="OPTION",
                       help="an extra #SBATCH option, e.g. --sbatch-line=--account=abc (repeatable)")
    slurm.add_argument("--setup", help="a shell line each job runs before the trial, e.g. 'module load cuda'")
    slurm.add_argument("--cancel-on-stop", action="store_true", default=None,
                       help="on Ctrl-C or SIGTERM cancel the sweep's jobs (running ones get SIGTERM: they "
                       "checkpoint and stop) instead of leaving them in the queue")


def build(args: argparse.Namespace, trials: list) -> object:
    """The executor `--executor` names, from the flags given and the executor bindings."""
    import gin

    from tvrl_bench import config as gin_config
    from tvrl_bench.executors.base import build_executor

    if args.executor_config or args.executor_binding:
        gin_config.load_config([args.executor_config] if args.executor_config else [], args.executor_binding)
    try:
        return build_executor(
            args.executor, workers=args.workers, threads=args.threads, address=args.address,
            cpus_per_trial=args.cpus_per_trial, nodes_per_trial=args.nodes_per_trial,
            processes_per_node=args.processes_per_node, partition=args.partition, time_limit=args.time_limit,
            mem=args.mem, gpus_per_node=args.gpus_per_node, sbatch_lines=args.sbatch_line, setup=args.setup,
            cancel_on_stop=args.cancel_on_stop, trial_gpus=max((spec.num_gpus for spec in trials), default=0),
        )
    finally:
        gin.clear_config()


def print_job_script(executor, study, trials: list, options) -> None:
    """The first trial's job script, as it would be submitted (the parent run id is not known before a run)."""
    from tvrl_bench.sweeps.driver import trial_command

    if not trials or not hasattr(executor, "script"):
        return
    command = trial_command(trials[0], study, options, "PARENT_RUN_ID", 1, Path(options.out_dir),
                            make_log_folder=False)
    print(f"\n# the job script of {trials[0].key} ({trials[0].title}), attempt 1:")
    print(executor.script(command), end="")
