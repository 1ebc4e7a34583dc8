"""`tvrl-bench wide-eval` like the other commands (sweeps/wide_eval_run.py): its flags and --prompts refused in one
prefixed line before any worker starts, a study swept with --steps scored with the same --steps, a stop signal
ending its workers and itself with a line, and one logging wide-eval of a study at a time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from tests.sweeps.helpers import InProcess, options, write_study
from tests.tracking.helpers import fresh_store
from tvrl_bench.cli.main import main
from tvrl_bench.sweeps.driver import run_sweep
from tvrl_bench.sweeps.wide_eval_run import study_lock


@pytest.fixture(scope="module")
def swept_with_steps(tmp_path_factory, tiny_policy_path):
    """A tiny study file asking for 2 steps, swept with --steps 1 (base and uniform credit, seed 0): (folder,
    study file, uri)."""
    folder = tmp_path_factory.mktemp("swept")
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        uri = fresh_store(tmp_path_factory, folder)
        study = write_study(folder, tiny_policy_path, axes="{'credit': ['uniform']}", steps=2)
        study.write_text(study.read_text() + "sweeps.study.base = True\n")
        summary = run_sweep(str(study), InProcess, options(uri, folder, steps=1))
        assert len(summary.finished) == 2 and not summary.failed
    finally:
        os.chdir(cwd)
    return folder, study, uri


def wide_eval(capsys, *args: str) -> tuple[int, list[str]]:
    code = main(["wide-eval", *args, "--no-progress"])
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("flags, needle", [
    (["--prompts", "0"], "--prompts 0: give the number of wider eval prompts per trial, e.g. --prompts 1000"),
    (["--workers", "0"], "--workers 0: give 1 or more processes"),
    (["--csv", "."], "--csv .: this is a folder; name a file for every trial's own and wide metrics, e.g. --csv "
                     "./wide_eval.csv"),
    (["--out", __file__], f"--out {__file__}: this is a file; pass the sweep's --out folder"),
    (["--steps", "-1"], "--steps -1: give the --steps the sweep ran with"),
])
def test_a_bad_flag_is_one_prefixed_line(capsys, flags, needle):
    code, lines = wide_eval(capsys, "no_such_study.gin", *flags)
    assert code == 2 and len(lines) == 1
    assert lines[0].startswith("tvrl-bench wide-eval: error: ") and needle in lines[0]


def test_prompts_below_the_trials_own_or_beyond_the_world_are_refused_before_scoring(tmp_path, tiny_policy_path,
                                                                                    monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    study = write_study(tmp_path, tiny_policy_path, axes="{'credit': ['uniform']}", steps=1,
                        extra=("training.trial.eval_prompts = 8",))  # FAST draws 8 eval prompts
    code, lines = wide_eval(capsys, str(study), "--out", str(tmp_path / "out"), "--prompts", "6")
    assert code == 2 and len(lines) == 1, lines
    assert "--prompts 6 is fewer than trial credit=uniform seed=0's own" in lines[0] and "e.g. --prompts" in lines[0]
    # no trial of this study has run: the refusals come from the study's configs alone, before any checkpoint is read
    code, lines = wide_eval(capsys, str(study), "--out", str(tmp_path / "out"), "--prompts", "1000000")
    assert code == 2 and len(lines) == 1, lines
    assert "--prompts 1000000: trial credit=uniform seed=0 is on the sprite world, which has 1,344 distinct scenes" \
        in lines[0] and "ask for at most 1344, e.g. --prompts 1000" in lines[0]
    assert "internal error" not in lines[0]
    # the slot world's own count (6 colours ^ 4 slots), not the sprite world's
    study.write_text(study.read_text().replace("components/profiles/toy_v1.gin", "components/profiles/toy.gin"))
    code, lines = wide_eval(capsys, str(study), "--out", str(tmp_path / "out"), "--prompts", "2000")
    assert code == 2 and len(lines) == 1, lines
    assert "--prompts 2000: trial credit=uniform seed=0 is on the slot world, which has 1,296 distinct scenes" in lines[0]


def test_a_study_swept_with_steps_is_scored_with_the_same_steps(swept_with_steps, capsys, monkeypatch):
    folder, study, _ = swept_with_steps
    monkeypatch.chdir(folder)
    code, lines = wide_eval(capsys, str(study), "--out", str(folder / "out"), "--no-log", "--prompts", "16")
    assert code == 2 and len(lines) == 1, lines
    runs = folder / "out" / "runs" / "tiny"
    assert lines[0] == (f"tvrl-bench wide-eval: error: {runs}: its 2 trials were swept with --steps 1, not the study "
                        "file alone (other flags give other trial keys); pass wide-eval --steps 1, as tvrl-sweep ran")
    code, lines = wide_eval(capsys, str(study), "--out", str(folder / "out"), "--no-log", "--prompts", "16",
                            "--steps", "3")  # the flag that differs is named, not --profile
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].endswith("were swept with --steps 1, not --steps 3 (other flags give other trial keys); pass "
                             "wide-eval --steps 1, as tvrl-sweep ran")
    code = main(["wide-eval", str(study), "--out", str(folder / "out"), "--no-log", "--prompts", "16", "--steps",
                 "1", "--workers", "1", "--no-progress"])
    assert code == 0
    assert "tiny: the trials' own eval prompts" in capsys.readouterr().out


def test_a_second_logging_wide_eval_of_a_study_is_refused(swept_with_steps, capsys, monkeypatch):
    folder, study, uri = swept_with_steps
    monkeypatch.chdir(folder)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                               "from tvrl_bench.sweeps.wide_eval_run import study_lock\n"
                               f"lock = study_lock({str(folder / 'out' / 'runs' / 'tiny')!r}, 'tiny').acquire()\n"
                               "print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        code, lines = wide_eval(capsys, str(study), "--out", str(folder / "out"), "--tracking-uri", uri,
                                "--prompts", "16", "--steps", "1")
        assert code == 2 and len(lines) == 1, lines
        assert f"in use by process {holder.pid}" in lines[0] and "wide-eval of study tiny" in lines[0]
    finally:
        holder.kill()
        holder.wait()
    lock = study_lock(folder / "out" / "runs" / "tiny", "tiny").acquire()  # free again once its holder is gone
    lock.release()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_ends_the_workers_and_the_command_with_a_line(swept_with_steps, signum):
    folder, study, _ = swept_with_steps
    command = [sys.executable, "-m", "tvrl_bench.cli.main", "wide-eval", str(study), "--out", str(folder / "out"),
               "--no-log", "--prompts", "600", "--steps", "1", "--workers", "2", "--no-progress"]
    process = subprocess.Popen(command, cwd=folder, stderr=subprocess.PIPE, text=True)
    parent = psutil.Process(process.pid)
    deadline = time.monotonic() + 60
    while len(parent.children(recursive=True)) < 3 and time.monotonic() < deadline:  # two workers, a tracker
        time.sleep(0.2)
    family = parent.children(recursive=True)
    assert len(family) >= 2, "the workers did not start"
    time.sleep(2)
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert f"tvrl-bench wide-eval: stopped by {signal.Signals(signum).name}" in err
    gone, alive = psutil.wait_procs(family, timeout=10)
    assert not alive, [p.cmdline() for p in alive]
