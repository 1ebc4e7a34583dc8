"""What every entry point shares: tvrl-train, tvrl-sweep, tvrl-report, and tvrl-bench with its subcommands.

- `run_main`: parse the arguments, resolve the tracking URI by the one rule (`--tracking-uri`, else
  $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db) and run the command through `errors.run_guarded`: an error is one
  line on stderr, exit 2 for the user's mistake, 1 for a bug, 130 when interrupted (`--debug` adds the traceback).
- `add_tracking_uri`: the `--tracking-uri` flag; `set_torch_threads`: torch's CPU threads for this process.

Nothing here imports torch, MLflow or a component at import time, so `--help` answers at once.
"""

from __future__ import annotations

import argparse
import os
from typing import Callable

from tvrl_bench.cli.errors import UserError, run_guarded


def run_main(
    prog: str | Callable[[argparse.Namespace], str],
    parser: argparse.ArgumentParser,
    body: Callable[[argparse.Namespace], int],
    argv: list[str] | None = None,
    keep_uri: bool = False,
) -> int:
    """`body(args)` for the parsed `argv`, guarded by `run_guarded` under `prog` (or `prog(args)`), which names the
    resolved tracking URI in a store failure. With `keep_uri`, `args.tracking_uri` becomes that resolved URI (for
    commands that check the store themselves); otherwise it stays as given (None: the work resolves it)."""
    args = parser.parse_args(argv)
    from tvrl_bench.tracking.store import resolve_uri

    uri = resolve_uri(getattr(args, "tracking_uri", None))
    if keep_uri:
        args.tracking_uri = uri
    name = prog(args) if callable(prog) else prog
    return run_guarded(name, lambda: body(args), args.debug, uri)


def add_tracking_uri(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """`--tracking-uri` (default None: `run_main` applies the URI rule)."""
    if help is None:
        from tvrl_bench.tracking.store import DEFAULT_TRACKING_URI

        help = f"MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else {DEFAULT_TRACKING_URI})"
    parser.add_argument("--tracking-uri", default=None, help=help)


def check_out_folder(out: str, holds: str, flag: str = "--out") -> None:
    """UserError naming `flag` when `out` is a file or a folder this process cannot write in (read-only file
    system, no permission), checked by writing a scratch file in it or its nearest existing parent; `holds`: what
    goes there ("runs/, logs/ and reports/")."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise UserError(f"{flag} {out}: this is a file; name a folder for {holds}")
    _check_writable(out, f"{flag} {out}", f"pass a folder you can write for {holds}, e.g. {flag} ~/tvrl-runs")


def check_out_file(path: str, holds: str, flag: str, example: str) -> None:
    """UserError naming `flag` unless the file `path` can be written: not a folder, its folder (or the nearest
    existing parent, where it would be made) a folder this process can write in; `example`: a file name for it."""
    if os.path.isdir(path):
        raise UserError(f"{flag} {path}: this is a folder; name a file for {holds}, e.g. "
                        f"{flag} {os.path.join(path, example)}")
    _check_writable(os.path.dirname(os.path.abspath(path)), f"{flag} {path}",
                    f"name a file in a folder you can write for {holds}")


def _check_writable(folder: str, given: str, fix: str) -> None:
    """UserError `GIVEN: ...; FIX` unless a file can be made in `folder` or, where it does not exist yet, in its
    nearest existing parent (a file standing in the way is named)."""
    import tempfile

    existing = os.path.abspath(folder)
    while not os.path.isdir(existing):
        if os.path.exists(existing):
            raise UserError(f"{given}: {existing} is a file, not a folder; {fix}")
        existing = os.path.dirname(existing)
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise UserError(f"{given}: cannot write in {existing} ({exc.strerror}); {fix}") from None


def set_torch_threads(threads: int) -> None:
    """torch's CPU threads for this process; imports torch, so call it once the arguments are checked."""
    import torch

    torch.set_num_threads(threads)
