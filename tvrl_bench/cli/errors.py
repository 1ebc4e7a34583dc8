"""How the console scripts end: one line per error, the traceback only with `--debug`.

A user's mistake (a config value, a file, a flag, an unreachable tracking store, a busy trial) is one line
naming the place and the fix, exit code 2. Anything else is a bug: one line saying so, exit code 1. `--debug`
prints the traceback above that line (tvrl-sweep passes it to its trials, so their logs keep tracebacks). Every
script adds `--debug` with `add_debug_flag` and runs its body through `run_guarded`.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import traceback
from typing import Callable

USAGE = 2  # a user error: the message says what to change
BUG = 1
INTERRUPTED = 130  # Ctrl-C (128 + SIGINT); a stop signal turned into KeyboardInterrupt ends with 128 + its number

# A collective (gloo, NCCL) whose peer process died or left: not this process's bug, and worth a retry.
_PEER_LOST = re.compile(r"connection (closed|reset) by peer|DistBackendError|NCCL (error|communicator)|"
                        r"\[gloo\]|gloo.*(timed out|closed)", re.IGNORECASE)

# gin appends the configurable it was calling to an exception's message; the first such name is kept.
_GIN_CALL = re.compile(r"\n\s*In call to configurable '([\w.]+)'.*", re.DOTALL)


class UserError(Exception):
    """A mistake in what the user asked for (flags, files, values); the message names the place and the fix."""


def add_debug_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--debug", action="store_true",
        help="on an error, also print the full Python traceback (for bug reports)",
    )


# tvrl-bench's exception types whose message is meant for the user. Matched by name, so that reporting an error
# never imports torch (several of these live in packages whose __init__ imports it).
USER_ERRORS = {"UserError", "ConfigError", "PromptFileError", "TrackingError", "TrialBusy", "CheckpointError",
               "ReportError", "RegistryError", "TrialNotFinished"}


def is_user_error(exc: BaseException) -> bool:
    return any(cls.__module__.startswith("tvrl_bench") and cls.__name__ in USER_ERRORS for cls in type(exc).__mro__)


def is_peer_failure(exc: BaseException) -> bool:
    """Whether `exc` is a collective failing because another process of the group died or disconnected."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return "DistBackendError" in names or bool(_PEER_LOST.search(f"{type(exc).__name__}: {exc}"))


def strip_gin_context(message: str) -> tuple[str, str | None]:
    """(message without gin's "In call to configurable ..." lines, the configurable named there or None)."""
    found = _GIN_CALL.search(message)
    if not found:
        return message.strip(), None
    return message[: found.start()].strip(), found.group(1)


def explain(exc: BaseException, tracking_uri: str | None = None) -> tuple[str, int]:
    """(one-line message, exit code) for an exception that reached the top of a command."""
    from tvrl_bench.tracking.store import describe_failure, is_tracking_failure

    message, component = strip_gin_context(str(exc))
    if is_user_error(exc):
        return message, USAGE
    if tracking_uri and is_tracking_failure(exc):
        return describe_failure(tracking_uri, exc), USAGE
    if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)):
        where = f"building {component}: " if component else ""
        named_by = "bound in your config" if component else "given by a flag or named in your config"
        fix = "" if re.search(r"\b(run|Run|set|point|pass|give)\b", message) else (
            f"; check the path (a checkpoint or data file) {named_by}")
        return f"{where}{message}{fix}", USAGE
    first = message.splitlines()[0] if message else ""
    if is_peer_failure(exc):
        return (
            f"another process of this trial failed or was lost ({type(exc).__name__}: {first}); its own log says why "
            "(each node's output, or the sweep's logs/ folder). The trial can be rerun: it resumes from its last "
            "checkpoint",
            BUG,
        )
    where = f" (building {component})" if component else ""
    return (
        f"internal error{where}: {type(exc).__name__}: {first} -- this is a bug in tvrl-bench or a component; "
        "rerun with --debug for the traceback",
        BUG,
    )


def interrupted_code(exc: KeyboardInterrupt) -> int:
    """The exit code of a stopped command: 128 + the signal's number when a stop signal raised `exc` (its argument
    names it, as `cli/script.py` raises it: SIGTERM 143, SIGHUP 129), else 130 (Ctrl-C)."""
    name = exc.args[0] if exc.args and isinstance(exc.args[0], str) else ""
    return 128 + int(signal.Signals[name]) if name in signal.Signals.__members__ else INTERRUPTED


def run_guarded(prog: str, body: Callable[[], int], debug: bool, tracking_uri: str | None = None) -> int:
    """Run a command's body; an exception becomes one line on stderr and an exit code (see the module)."""
    try:
        return int(body() or 0)
    except KeyboardInterrupt as exc:
        if debug:
            traceback.print_exc()
        print(f"{prog}: interrupted", file=sys.stderr)
        return interrupted_code(exc)
    except Exception as exc:  # the one place that decides how a command ends
        if debug:
            traceback.print_exc()
        message, code = explain(exc, tracking_uri)
        print(f"{prog}: error: {message}", file=sys.stderr)
        return code
