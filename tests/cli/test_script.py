"""How a script takes its arguments and fails (tvrl_bench/cli/script.py): one line and exit 2 for a mistake, its
temporary folder removed and its children stopped when it is stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tvrl_bench.cli.script import UserError, above, at_least, must, run_script, script_parser
from tvrl_bench.config import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def parser():
    p = script_parser(str(ROOT / "diagnostics" / "made_up.py"), "Measures something.\n\nLast line: x=<y>")
    p.add_argument("--prompts", type=int, default=48, action=at_least(1))
    p.add_argument("--alphas", type=float, nargs="+", default=[1e-3, 1e-2], action=above(0))
    p.add_argument("--trials", type=int, default=None, action=must(lambda v: v % 2 == 0, "an even number"))
    return p


def ended(argv, capsys, body=lambda args: print("measured")):
    code = run_script(parser(), body, argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip().splitlines()


@pytest.mark.parametrize("argv, line", [
    (["--prompts", "0"], "diagnostics/made_up.py: error: --prompts 0: give 1 or more, e.g. --prompts 48"),
    (["--alphas", "1e-3", "0"], "diagnostics/made_up.py: error: --alphas 0.0: give a number above 0, e.g. --alphas "
                                "0.001 0.01"),
    (["--trials", "3"], "diagnostics/made_up.py: error: --trials 3: give an even number"),  # no default, no example
    (["--prompts", "x"], "diagnostics/made_up.py: error: argument --prompts: invalid int value: 'x' (`python "
                         "diagnostics/made_up.py --help` lists the arguments)"),
])
def test_a_bad_argument_is_one_line_naming_it_and_exit_2(argv, line, capsys):
    code, out, err = ended(argv, capsys)
    assert (code, out, err) == (2, "", [line])


def test_good_arguments_run_the_body_and_help_answers(capsys):
    assert ended(["--prompts", "2", "--trials", "4"], capsys)[:2] == (0, "measured\n")
    code, out, _ = ended(["--help"], capsys)
    assert code == 0 and "Measures something." in out and "--debug" in out


@pytest.mark.parametrize("error, code, line", [
    (UserError("--root x: this is a file; name a folder"), 2, "diagnostics/made_up.py: error: --root x: this is a file; "
                                                               "name a folder"),
    (ConfigError("mine.gin:3: 'samplers.sage' has no parameter 'etta'"), 2,
     "diagnostics/made_up.py: error: mine.gin:3: 'samplers.sage' has no parameter 'etta'"),
    (KeyError("x"), 1, "diagnostics/made_up.py: error: internal error: KeyError: 'x' -- this is a bug in tvrl-bench or "
                       "a component; rerun with --debug for the traceback"),
])
def test_an_error_in_the_body_ends_as_a_command_ends(error, code, line, capsys):
    def body(args):
        raise error

    assert ended([], capsys, body) == (code, "", [line])
    debug = ended(["--debug"], capsys, body)
    assert debug[0] == code and debug[2][0] == "Traceback (most recent call last):" and debug[2][-1] == line


STOPPABLE = textwrap.dedent("""
    import sys, time
    from tvrl_bench.cli.script import run_script, scratch, script_parser

    def body(args):
        with scratch("tvrl-test-scratch-", grace_s=2) as work:
            (work.folder / "data").write_bytes(b"x" * 1000)
            child = "import os, pathlib, sys, time; pathlib.Path(sys.argv[1]).write_text(str(os.getpid())); time.sleep(60)"
            work.run([sys.executable, "-c", child, str(work.folder / "child.pid")])

    sys.exit(run_script(script_parser(__file__, None), body))
""")
# Children started with `start` (not waited for): one that ended before the stop, one still running.
STARTED = STOPPABLE.replace(
    'work.run([sys.executable, "-c", child, str(work.folder / "child.pid")])',
    'work.start([sys.executable, "-c", "pass"]).wait()\n'
    '        work.start([sys.executable, "-c", child, str(work.folder / "child.pid")])\n'
    '        time.sleep(60)')


@pytest.mark.parametrize("stop, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
@pytest.mark.parametrize("body", [STOPPABLE, STARTED], ids=["run", "start"])
def test_a_stopped_script_stops_its_child_removes_its_folder_and_says_interrupted(stop, code, body, tmp_path):
    """One line, no traceback, exit 128 + the signal's number, the child stopped and the temp folder gone."""
    script = tmp_path / "stoppable.py"
    script.write_text(body)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, str(script)], env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("tvrl-test-scratch-*/child.pid")) and time.monotonic() < deadline:
        time.sleep(0.05)
    [pid_file] = tmp_path.glob("tvrl-test-scratch-*/child.pid")
    time.sleep(0.2)  # the pid written before it is read whole
    child = int(pid_file.read_text())
    process.send_signal(stop)
    stderr = process.communicate(timeout=60)[1]
    assert process.returncode == code and stderr.strip() == "stoppable.py: interrupted", stderr
    assert not list(tmp_path.glob("tvrl-test-scratch-*"))
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
