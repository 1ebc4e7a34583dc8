"""The executor interface: trial command lines, log files, worker environments, and building an executor by name."""

from __future__ import annotations

import os
import sys
from concurrent.futures import Future

import pytest

from tvrl_bench import registry
from tvrl_bench.executors.base import NOT_STARTED, Executor, TrialCommand, build_executor, log_file, worker_environment

ARGS = ("components/profiles/toy_v1.gin", "--gin_bindings", "training.trial.steps = 2", "--attempt", "1")
TRAIN = ["-m", "tvrl_bench.cli.train", *ARGS, "--threads", "3", "--no-progress", "--debug"]


def test_argv_runs_tvrl_train_with_this_interpreter_on_zero_or_one_gpu():
    command = TrialCommand(ARGS)
    assert command.argv(threads=3, gpus=0) == [sys.executable, *TRAIN]
    assert command.argv(threads=3, gpus=1) == [sys.executable, *TRAIN]


def test_argv_launches_with_accelerate_over_several_gpus():
    argv = TrialCommand(ARGS, num_gpus=4).argv(threads=3, gpus=4)
    assert argv[:3] == [sys.executable, "-m", "accelerate.commands.launch"]
    assert argv[3:] == ["--multi_gpu", "--num_processes", "4", *TRAIN]


def test_accelerate_parses_the_multi_gpu_command_as_the_train_module_with_its_arguments():
    """The launch line must mean what it says to accelerate's own parser (module mode, every trial argument kept)."""
    from accelerate.commands.launch import launch_command_parser

    argv = TrialCommand(ARGS).argv(threads=2, gpus=2)
    parsed = launch_command_parser().parse_args(argv[3:])
    assert parsed.multi_gpu and parsed.num_processes == 2 and parsed.module
    assert parsed.training_script == "tvrl_bench.cli.train"
    assert parsed.training_script_args == [*ARGS, "--threads", "2", "--no-progress", "--debug"]


def test_trial_command_is_frozen_and_hashable_despite_its_environment_dict():
    a = TrialCommand(ARGS, env={"X": "1"}, num_gpus=1, log_path="a.log")
    b = TrialCommand(ARGS, env={"X": "2"}, num_gpus=1, log_path="a.log")
    assert hash(a) == hash(b)  # env is left out of the hash
    with pytest.raises(AttributeError):
        a.num_gpus = 2  # type: ignore[misc]


def test_log_file_names_the_key_and_attempt_and_creates_its_folder(tmp_path):
    folder = tmp_path / "logs" / "study"
    path = log_file(folder, "abc123", 3)
    assert path == str(folder / "abc123.attempt3.log")
    assert folder.is_dir()
    assert not os.path.exists(path)  # only the folder: the trial process writes the file


def test_worker_environment_sets_threads_and_keeps_the_callers_environment(monkeypatch):
    monkeypatch.setenv("TVRL_TEST_INHERITED", "yes")
    env = worker_environment({"EXTRA": "1", "OMP_NUM_THREADS": "99"}, threads=3, gpus=None)
    assert env["TVRL_TEST_INHERITED"] == "yes" and env["EXTRA"] == "1"
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "3"  # the thread budget wins over an extra value
    assert env["PYTHONUNBUFFERED"] == "1"
    assert os.environ.get("OMP_NUM_THREADS") != "99"  # the driver's own environment is not modified


def test_worker_environment_pins_gpus_only_when_given(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert worker_environment({}, 1, [2, 3])["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert worker_environment({}, 1, [])["CUDA_VISIBLE_DEVICES"] == ""
    assert "CUDA_VISIBLE_DEVICES" not in worker_environment({}, 1, None)


def test_build_executor_passes_only_the_settings_the_executor_takes():
    from tvrl_bench.executors.local import LocalExecutor

    executor = build_executor("local", workers=3, threads=None, address="127.0.0.1:6379", cpus_per_trial=2.0)
    try:
        assert type(executor) is LocalExecutor
        assert executor.workers == 3
        assert executor.threads == max(1, (os.cpu_count() or 1) // 3)  # None left out: the default applies
    finally:
        executor.shutdown()
    executor = build_executor("local", workers=1, threads=5)
    try:
        assert executor.workers == 1 and executor.threads == 5
    finally:
        executor.shutdown()


def test_build_executor_rejects_an_unknown_name_with_a_suggestion():
    with pytest.raises(registry.RegistryError) as caught:
        build_executor("locl", workers=1)
    message = str(caught.value)
    assert "--executor locl" in message and "did you mean 'local'" in message
    assert "local" in message.split("registered:")[1] and "ray" in message.split("registered:")[1]


def test_an_executor_must_implement_submit_and_the_rest_defaults_to_nothing():
    with pytest.raises(TypeError):
        Executor()  # type: ignore[abstract]

    class Done(Executor):
        def submit(self, command: TrialCommand) -> Future:
            future: Future = Future()
            future.set_result(NOT_STARTED)
            return future

    executor = Done()
    assert executor.workers == 1
    assert executor.submit(TrialCommand(ARGS)).result() == NOT_STARTED
    executor.interrupt()
    executor.shutdown()
