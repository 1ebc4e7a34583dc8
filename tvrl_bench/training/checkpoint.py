"""Trial checkpoints: trainable weights, optimizer state, the next step, and the MLflow run to resume.

Layout: <folder>/state.pt (written atomically) and <folder>/trial.json ({"run_id", "step", "finished",
"attempt"}). state.pt always holds full tensors (a sharded trial gathers them first), so one process can load it.
All randomness is derived from (seed, step), so no RNG state needs saving.
A write that fails (a full disk, a read-only folder) raises CheckpointError naming the file, the reason and the
fix, and leaves the previous checkpoint as it was.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pickle
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


class CheckpointError(OSError):
    """A checkpoint could not be written or read; the message names the file and the fix."""


def write_failure(path: Path, exc: BaseException) -> CheckpointError:
    """A CheckpointError explaining why writing `path` failed (torch's own message names a C++ source line)."""
    folder = path.parent
    text = (str(exc).splitlines() or [type(exc).__name__])[0]
    strerror = re.search(r"strerror: (.+)$", text)
    reason = getattr(exc, "strerror", None) or (strerror.group(1) if strerror else
                                                  re.sub(r"\[enforce fail at [^\]]*\]\s*\.?\s*", "", text))
    if path.is_dir():
        return CheckpointError(
            f"could not write the checkpoint {path}: a folder of that name is in the way; remove it, then rerun the "
            "same command to resume from the last checkpoint"
        )
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = None
    if getattr(exc, "errno", None) == errno.ENOSPC or (free is not None and free < 64 * 2**20):
        reason = "the disk is full" + (f" ({free / 2**20:.0f} MiB free)" if free is not None and free < 64 * 2**20 else "")
    elif getattr(exc, "errno", None) in (errno.EACCES, errno.EPERM, errno.EROFS) or not os.access(folder, os.W_OK):
        reason = f"the folder is not writable ({reason})"
    return CheckpointError(
        f"could not write the checkpoint {path}: {reason}; free some space or make {folder} writable (or run "
        "with another --out), then rerun the same command to resume from the last checkpoint"
    )


@dataclass
class CheckpointInfo:
    run_id: str | None
    step: int
    finished: bool
    attempt: int = 1


class CheckpointDir:
    """One trial's checkpoint folder."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    @property
    def state_path(self) -> Path:
        return self.folder / "state.pt"

    @property
    def info_path(self) -> Path:
        return self.folder / "trial.json"

    def info(self) -> CheckpointInfo | None:
        if not self.info_path.is_file():
            return None
        try:
            data = json.loads(self.info_path.read_text())
        except (OSError, ValueError) as exc:
            raise CheckpointError(
                f"cannot read {self.info_path} ({exc}); delete the trial folder {self.folder} to start the trial anew"
            ) from None
        return CheckpointInfo(
            data.get("run_id"), int(data.get("step", 0)), bool(data.get("finished", False)), int(data.get("attempt", 1))
        )

    def write_info(self, run_id: str | None, step: int, attempt: int | None = None, finished: bool = False) -> None:
        previous = self.info() if attempt is None else None
        attempt = attempt if attempt is not None else (previous.attempt if previous else 1)
        tmp = self.info_path.with_suffix(".tmp")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"run_id": run_id, "step": step, "finished": finished, "attempt": attempt}))
            os.replace(tmp, self.info_path)
        except OSError as exc:
            raise write_failure(self.info_path, exc) from None

    def save(self, step: int, run_id: str | None, parameters: dict[str, torch.Tensor], optimizer: Any, extra: dict) -> None:
        """Save the state after `step` completed steps (the next step to run is `step`).

        parameters: {str(i): full tensor of trainable parameter i}; optimizer: the optimizer, or its state_dict
        already gathered (a sharded trial's, training/sharded_state.py).
        """
        import torch

        tmp = self.folder / "state.pt.tmp"
        optimizer_state = optimizer if isinstance(optimizer, dict) else optimizer.state_dict()
        state = {"step": step, "parameters": parameters, "optimizer": optimizer_state, "extra": extra}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            torch.save(state, tmp)
            os.replace(tmp, self.state_path)
        except (OSError, RuntimeError) as exc:  # torch reports a failed write as RuntimeError("[enforce fail ...")
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise write_failure(tmp, exc) from None
        self.write_info(run_id, step)

    def load(self) -> dict[str, Any] | None:
        import torch

        if not self.state_path.is_file():
            return None
        try:
            # mmap: the processes of a trial each read the checkpoint without each holding a copy in memory
            return torch.load(self.state_path, map_location="cpu", weights_only=False, mmap=True)
        except (RuntimeError, EOFError, OSError, pickle.UnpicklingError) as exc:  # truncated or overwritten
            first = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise CheckpointError(
                f"{self.state_path}: the checkpoint cannot be read ({first}); it is damaged. Delete the folder "
                f"{self.folder} to start this trial anew, or restore the file from a backup"
            ) from None
