"""The test side of the faulty reward's pause (tests/training/faults.py), kept apart from it so that a test can
wait for pauses without importing (and so registering) the faulty reward in its own process."""

from __future__ import annotations

import time
from pathlib import Path

PAUSED_DIR_ENV = "TVRL_FAULT_PAUSED_DIR"  # where each pausing trial process writes a file named by its pid


def wait_for_pauses(folder: Path, process, count: int, timeout_s: float = 600) -> None:
    """Return once `count` trial processes have announced their pause in `folder` ($TVRL_FAULT_PAUSED_DIR);
    fails if `process` (the sweep driver) ends first or the pauses do not all arrive within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        time.sleep(1)
        if process.poll() is not None:
            stderr = process.stderr.read()[-3000:] if process.stderr else ""
            raise AssertionError(f"the sweep ended early with code {process.returncode}: {stderr}")
        if folder.is_dir() and len(list(folder.iterdir())) == count:
            return
    raise AssertionError(f"{count} trials did not reach their pause within {timeout_s:.0f} s")
