"""Multi-node trials in the executors: per-node commands, placement bundles, and a trial failing with any node."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tvrl_bench.config import ConfigError
from tvrl_bench.executors.base import TrialCommand
from tvrl_bench.executors.nodes import check_layout, node_command, trial_code, wait_for_nodes
from tvrl_bench.executors.ray_nodes import node_bundles, node_commands

ARGS = ("components/profiles/toy_v1.gin", "--attempt", "1")


def test_each_node_runs_accelerate_with_its_rank_the_main_address_and_every_process():
    commands = node_commands(TrialCommand(ARGS), nodes=3, per_node=2, threads=4, main_ip="10.0.0.7", port=29511)
    assert len(commands) == 3
    for rank, argv in enumerate(commands):
        assert argv == node_command([*ARGS, "--threads", "4", "--no-progress", "--debug", "--cpu"], 3, rank, "10.0.0.7",
                                    29511, 2)  # no GPUs asked: the processes join one gloo group on the CPU
        flags = {flag: value for flag, value in zip(argv, argv[1:]) if flag.startswith("--")}
        assert flags["--machine_rank"] == str(rank) and flags["--num_machines"] == "3"
        assert flags["--num_processes"] == "6" and flags["--main_process_ip"] == "10.0.0.7"


def test_accelerate_parses_a_node_command_as_that_node_of_the_launch():
    from accelerate.commands.launch import launch_command_parser

    argv = node_commands(TrialCommand(ARGS, num_gpus=8), nodes=2, per_node=4, threads=1, main_ip="10.0.0.7", port=29511)[1]
    parsed = launch_command_parser().parse_args(argv[3:])
    assert (parsed.num_machines, parsed.machine_rank, parsed.num_processes) == (2, 1, 8)
    assert parsed.main_process_ip == "10.0.0.7" and parsed.main_process_port == 29511
    assert parsed.module and parsed.training_script == "tvrl_bench.cli.train"
    assert parsed.training_script_args == [*ARGS, "--threads", "1", "--no-progress", "--debug"]  # GPUs: no --cpu


def test_bundles_ask_one_node_each_with_a_gpu_per_process_only_for_gpu_trials():
    assert node_bundles(2, 4, 8.0, gpus=True) == [{"CPU": 8.0, "GPU": 4.0}] * 2
    assert node_bundles(3, 1, 1.0, gpus=False) == [{"CPU": 1.0}] * 3


@pytest.mark.parametrize("nodes, per_node, flag", [(0, 1, "--nodes-per-trial 0"), (2, 0, "--processes-per-node 0")])
def test_a_layout_below_one_names_the_flag(nodes, per_node, flag):
    with pytest.raises(ConfigError, match=flag):
        check_layout(nodes, per_node)


def test_the_trial_code_is_a_usage_error_anywhere_else_the_first_failure():
    assert trial_code([0, 0]) == 0
    assert trial_code([-15, 1]) == -15 and trial_code([1, 2]) == 2
    assert trial_code([-15, 1], first_failure=1) == 1  # node 1 failed first; node 0 was stopped after it


def sleeper(seconds: float, code: int, ignore_term: bool = False) -> subprocess.Popen:
    body = ("import signal, sys, time\n" + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "")
            + f"time.sleep({seconds})\nsys.exit({code})\n")
    return subprocess.Popen([sys.executable, "-c", body])


def test_one_failing_node_stops_the_others_after_the_grace_and_fails_the_trial():
    started = time.monotonic()
    nodes = [sleeper(120, 0), sleeper(0, 3)]
    assert wait_for_nodes(nodes, grace_s=1.0, poll_s=0.1) == 3  # node 0 was SIGTERMed
    assert nodes[0].returncode == -15 and time.monotonic() - started < 30


def test_a_node_that_ignores_sigterm_is_killed():
    nodes = [sleeper(120, 0, ignore_term=True), sleeper(0, 1)]
    assert wait_for_nodes(nodes, grace_s=1.0, poll_s=0.1) == 1
    assert nodes[0].returncode == -9


@pytest.mark.parametrize("flag", ["--nodes-per-trial", "--processes-per-node"])
def test_tvrl_sweep_rejects_a_layout_below_one_before_anything_runs(flag):
    from tvrl_bench.cli.errors import UserError
    from tvrl_bench.cli.sweep import build_parser, check_flags

    args = build_parser().parse_args(["study.gin", flag, "0"])
    with pytest.raises(UserError, match=f"{flag} 0: give 1 or more"):
        check_flags(args)
    assert "--nodes-per-trial M" in build_parser().format_help()  # explained in --help


def test_the_local_executor_takes_the_layout_and_build_executor_passes_it():
    from tvrl_bench.executors.base import build_executor

    executor = build_executor("local", workers=1, threads=1, nodes_per_trial=2, processes_per_node=None,
                              address="auto", cpus_per_trial=1.0)
    try:
        assert executor.nodes == (2, 1)
    finally:
        executor.shutdown()
    plain = build_executor("local", workers=1, threads=1, nodes_per_trial=None, processes_per_node=None)
    try:
        assert plain.nodes is None  # without the flags: one process (or one accelerate launch) per trial
    finally:
        plain.shutdown()
