"""How a script of benchmarks/ and diagnostics/ takes its arguments and fails: as the commands do.

    from tvrl_bench.cli.script import at_least, run_script, script_parser

    def measure(args) -> None:  # the script's work; raise UserError for a mistake found later
        ...

    def main(argv: list[str] | None = None) -> int:
        parser = script_parser(__file__, __doc__)
        parser.add_argument("--prompts", type=int, default=48, action=at_least(1), help="training prompts")
        return run_script(parser, measure, argv)

    if __name__ == "__main__":
        sys.exit(main())

- `script_parser`: an ArgumentParser named after the script's path from the repository root
  (`diagnostics/calibration.py`), its description the script's docstring, with `--debug`; its own errors
  (an unknown flag, `--prompts x`) are one line, exit 2.
- `at_least`, `above`, `must`: actions that refuse a value when it is parsed, in one line naming the argument, the
  value and the fix, the default as the example: `diagnostics/calibration.py: error: --prompts 0: give 1 or more,
  e.g. --prompts 48`.
- `run_script`: runs the script's body as `errors.run_guarded` runs a command's: a mistake (UserError, a
  ConfigError naming FILE:LINE, a missing file) is one line and exit 2, a bug one line and exit 1 (`--debug` adds
  the traceback); SIGTERM and SIGHUP stop it as Ctrl-C does, with `PROG: interrupted` and exit 128 + the signal's
  number (Ctrl-C 130, SIGTERM 143, SIGHUP 129), once its `with` blocks have cleaned up.
- `stops_interrupt`: the same for a block of a command (`tvrl-bench`'s subcommands run in one): SIGTERM and SIGHUP
  raise KeyboardInterrupt naming the signal, and the signals received are listed.
- `scratch`: a temporary folder and the child processes started for it (`Scratch.run`, or `Scratch.start` for
  several at once), stopped and removed however the script ends.

Nothing here imports torch, so a script that imports it inside its body answers a bad argument at once.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

from tvrl_bench.cli.errors import USAGE, UserError, add_debug_flag, run_guarded

__all__ = ["Scratch", "UserError", "above", "at_least", "must", "run_script", "scratch", "script_parser",
           "stops_interrupt"]

ROOT = Path(__file__).resolve().parents[2]
# SIGINT already raises KeyboardInterrupt; these are made to raise it too while a script's body runs.
_STOPS = (signal.SIGTERM, signal.SIGHUP)


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own: the usage, then the error line
        print(f"{self.prog}: error: {message} (`python {self.prog} --help` lists the arguments)", file=sys.stderr)
        raise SystemExit(USAGE)


def script_name(file: str) -> str:
    """A script's path as users type it: relative to the repository root when it lies inside, else its name."""
    path = Path(file).resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name


def script_parser(file: str, doc: str | None) -> argparse.ArgumentParser:
    """The parser of the script at `file` (pass `__file__` and `__doc__`, its help), with `--debug`."""
    parser = _OneLineParser(prog=script_name(file), description=(doc or "").strip(),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_debug_flag(parser)
    return parser


def must(test: Callable[[Any], bool], what: str) -> type[argparse.Action]:
    """An argparse action storing the parsed value (each of them, for `nargs`) when `test(value)` holds; else the one
    line `PROG: error: OPTION VALUE: give WHAT, e.g. OPTION DEFAULT`, exit 2."""

    class Checked(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            name = option_string or self.dest
            for value in values if isinstance(values, list) else [values]:
                if not test(value):
                    _refuse(parser, f"{name} {value}: give {what}{_example(name, self.default, test)}")
            setattr(namespace, self.dest, values)

    return Checked


def _example(name: str, default: Any, test: Callable[[Any], bool]) -> str:
    values = list(default) if isinstance(default, (list, tuple)) else [default]
    if default is None or not all(test(v) for v in values):
        return ""
    return f", e.g. {name} {' '.join(map(str, values))}"


def _refuse(parser: argparse.ArgumentParser, line: str) -> None:
    print(f"{parser.prog}: error: {line}", file=sys.stderr)
    raise SystemExit(USAGE)


def at_least(low: float) -> type[argparse.Action]:
    """`must` a number >= low (`at_least(1)`: a count)."""
    return must(lambda v: v >= low, f"{low:g} or more")


def above(low: float) -> type[argparse.Action]:
    """`must` a number > low (`above(0)`: a step size, a learning rate)."""
    return must(lambda v: v > low, f"a number above {low:g}")


def run_script(parser: argparse.ArgumentParser, body: Callable[[argparse.Namespace], Any],
               argv: list[str] | None = None) -> int:
    """Parse `argv` (default: the command line) and run `body(args)` as a command runs (see the module); returns
    the exit code: 0, 2 for a mistake, 1 for a bug, 130 when stopped."""
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a refused argument (2), its line printed
        return exc.code if isinstance(exc.code, int) else USAGE
    with stops_interrupt():
        return run_guarded(parser.prog, lambda: body(args), args.debug)


@contextlib.contextmanager
def stops_interrupt() -> Iterator[list[int]]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt(signal name) in the block, as Ctrl-C raises it (the main thread
    only can handle signals); yields the list of the stop signals received, which it fills."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def interrupt(signum: int, frame: Any) -> None:
        received.append(signum)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, interrupt) for sig in _STOPS}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class Scratch:
    """A script's temporary folder (`folder`, or None) and the child processes it started with `run` or `start`."""

    def __init__(self, folder: Path | None, grace_s: float):
        self.folder = folder
        self.grace_s = grace_s
        self._children: list[subprocess.Popen] = []

    def run(self, command: list[str], *, capture_output: bool = False, timeout: float | None = None,
            **popen: Any) -> subprocess.CompletedProcess:
        """`subprocess.run(command, ...)` in its own process group, which is stopped (SIGTERM, then SIGKILL after
        `grace_s` seconds) when the script is stopped or `timeout` seconds pass (subprocess.TimeoutExpired)."""
        if capture_output:
            popen.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        process = self.start(command, **popen)
        try:
            out, err = process.communicate(timeout=timeout)
        except BaseException:
            self._stop(process)
            raise
        finally:
            self._children.remove(process)
        return subprocess.CompletedProcess(command, process.returncode, out, err)

    def start(self, command: list[str], **popen: Any) -> subprocess.Popen:
        """`subprocess.Popen(command, ...)` in its own process group, not waited for: the script polls it (several
        children at once); the group is stopped like `run`'s when the script is stopped or the scratch closes."""
        process = subprocess.Popen(command, start_new_session=True, **popen)
        self._children.append(process)
        return process

    def _stop(self, process: subprocess.Popen) -> None:
        for sig, wait in ((signal.SIGTERM, self.grace_s), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(wait)
                break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # what the child left of its group

    def close(self) -> None:
        for process in list(self._children):
            if process.poll() is None:  # one that ended and was reaped may have handed its number on
                self._stop(process)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def scratch(prefix: str | None, grace_s: float = 10.0) -> Iterator[Scratch]:
    """A fresh temporary folder named `prefix...` (None: no folder) and the children started with `Scratch.run`;
    on leaving the block (its end, an error, Ctrl-C, or SIGTERM under `run_script`) the children are stopped and
    the folder removed, a second signal waiting until that is done."""
    held = Scratch(None if prefix is None else Path(tempfile.mkdtemp(prefix=prefix)), grace_s)
    try:
        yield held
    finally:
        with _signals_held():
            held.close()


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP ignored in the block, so that a second Ctrl-C does not cut the cleanup short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, *_STOPS)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
