"""Writing a report's files together or not at all: each to a temporary file beside it, then all renamed into place.

A page and the CSV files beside it, or one table in its formats, are read together; a half-written set (new CSVs
beside a stale page) would pass for a consistent one. `write_together` checks every target first (a folder where a
file goes, a folder it cannot make), writes every temporary file, and only then renames them, so a failure leaves
the previous set as it was and raises `NotWritten`, whose one line names the file and the reason.
"""

from __future__ import annotations

import os
from pathlib import Path

from tvrl_bench.report.errors import ReportError

__all__ = ["NotWritten", "check_writable", "write_together"]


class NotWritten(ReportError):
    """A report file could not be written; the message names it, the reason and the fix."""


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_writable(folder: Path) -> None:
    """Make `folder` (and its parents) unless it exists; NotWritten when it cannot be made or written in."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NotWritten(f"{folder}: cannot make this folder ({_reason(exc)}); pass an --out you can write in") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise NotWritten(f"{folder}: cannot write in this folder (permission denied); pass an --out you can write in")


def write_together(folder: Path, texts: dict[str, str]) -> list[Path]:
    """Write `folder/<name>` for every {name: text} (UTF-8), all or none; returns the paths in `texts`' order.
    NotWritten, with every file as it was before, when one cannot be written."""
    check_writable(folder)
    targets = {name: folder / name for name in texts}
    for path in targets.values():
        if path.is_dir():
            raise NotWritten(f"{path}: a folder stands where this file goes; move it away")
    temporary: dict[str, Path] = {}
    replaced: list[str] = []
    name = ""
    try:
        for name, text in texts.items():
            temporary[name] = folder / f".{name}.{os.getpid()}.tmp"
            temporary[name].write_text(text, encoding="utf-8")
        for name, path in targets.items():
            os.replace(temporary[name], path)
            del temporary[name]
            replaced.append(name)
    except OSError as exc:
        kept = f"only {', '.join(replaced)} replaced" if replaced else "no file replaced"
        raise NotWritten(f"{targets[name]}: {_reason(exc)} ({kept})") from None
    finally:
        for path in temporary.values():
            path.unlink(missing_ok=True)
    return list(targets.values())
