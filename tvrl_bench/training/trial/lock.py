"""Folder locks: one process owns a trial's folder (and its RUNNING run), one sweep owns a study's folder.

A lock is an exclusive `flock` on a file in the folder, holding the owner's pid for messages. The kernel drops
it when the owner's process ends in any way (SIGKILL too), so a dead owner never blocks a rerun; a live one
makes the second process fail at once with TrialBusy naming the pid.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no locking (one process per trial is then on the user)
    fcntl = None

LOCK_FILE = "lock"


class TrialBusy(RuntimeError):
    """Another live process owns the folder; the message names it and what to do."""


class FolderLock:
    """An exclusive lock on `<folder>/<name>`; `acquire` raises TrialBusy when a live process holds it."""

    def __init__(self, folder: str | Path, name: str = LOCK_FILE, what: str = "trial"):
        self.folder = Path(folder)
        self.path = self.folder / name
        self.what = what
        self._file = None

    def acquire(self) -> "FolderLock":
        if not self.try_acquire():
            pid = self.owner()
            who = f"process {pid}" if pid else "another process"
            raise TrialBusy(
                f"{self.what} folder {self.folder} is in use by {who} (lock {self.path}); one process at a time "
                f"may run it: wait for that process to end or stop it (`kill {pid or 'PID'}`), then rerun"
            )
        return self

    def try_acquire(self) -> bool:
        """Take the lock if it is free; False when another live process holds it."""
        if self._file is not None:
            return True
        self.folder.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                return False
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle
        return True

    def owner(self) -> int | None:
        """The pid written by the current (or last) owner, if any."""
        try:
            text = self.path.read_text().strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None

    def release(self) -> None:
        if self._file is not None:
            if fcntl is not None:
                fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
            self._file.close()
            self._file = None

    def __enter__(self) -> "FolderLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def holder(folder: str | Path, name: str = LOCK_FILE) -> int | None:
    """The pid of a live process holding `<folder>/<name>` (0 when its pid is unknown), or None when it is free
    (or the folder does not exist). Probing does not create the folder."""
    folder = Path(folder)
    if not (folder / name).exists():
        return None
    lock = FolderLock(folder, name)
    if lock.try_acquire():
        lock.release()
        return None
    return lock.owner() or 0
