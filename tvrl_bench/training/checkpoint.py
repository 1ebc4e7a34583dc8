"""Trial checkpoints: trainable weights, optimizer state, the next step, and the MLflow run to resume.

Layout: <folder>/state.pt (written atomically) and <folder>/trial.json ({"run_id", "step", "finished",
"attempt"}). state.pt always holds full tensors (a sharded trial gathers them first), so one process can load it.
All randomness is derived from (seed, step), so no RNG state needs saving.
A write that fails (a full disk, a read-only folder) raises CheckpointError naming the file, the reason and the
fix, and leaves the previous checkpoint as it was.

Integrity: each save records the SHA-256 of state.pt in <folder>/state.pt.sha256 (one hex digest a line), and load
hashes state.pt and compares before unpickling it; a file that matches none of the listed digests (a disk or copy
fault, an edit) raises CheckpointError naming it and the fix, and is never used nor deleted. The cost is one extra
read of state.pt per save and per load (about 1-2 GB/s; a resume then reads it from the page cache).
Crash safety: before state.pt is replaced the sidecar lists the digests it held plus the new one, and after the
replace only the new one, so a process killed at any instant never makes a good checkpoint look damaged.
A folder without the sidecar (written by an older version, or killed between the very first state.pt and its
sidecar) is loaded unchecked, as before. To keep a state.pt changed on purpose, delete its sidecar.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
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
    def digest_path(self) -> Path:
        """The sidecar holding the SHA-256 digests state.pt may have (see the module docstring)."""
        return self.folder / "state.pt.sha256"

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
        already gathered (a sharded trial's, training/parallel/sharded_state.py).
        """
        import torch

        tmp = self.folder / "state.pt.tmp"
        optimizer_state = optimizer if isinstance(optimizer, dict) else optimizer.state_dict()
        state = {"step": step, "parameters": parameters, "optimizer": optimizer_state, "extra": extra}
        accepted = self.accepted_digests()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            torch.save(state, tmp)
            digest = file_sha256(tmp)
        except (OSError, RuntimeError) as exc:  # torch reports a failed write as RuntimeError("[enforce fail ...")
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise write_failure(tmp, exc) from None
        if accepted is not None:  # during the replace state.pt is the old file or the new one: accept both
            self._write_digests([*accepted, digest])
        try:
            os.replace(tmp, self.state_path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise write_failure(self.state_path, exc) from None
        self._write_digests([digest])
        self.write_info(run_id, step)

    def accepted_digests(self) -> list[str] | None:
        """The SHA-256 hex digests the sidecar lists for state.pt, or None when there is no sidecar."""
        try:
            text = self.digest_path.read_text()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CheckpointError(
                f"cannot read {self.digest_path} ({exc}); delete the folder {self.folder} to start this trial anew"
            ) from None
        return [line.strip().lower() for line in text.splitlines() if line.strip()]

    def _write_digests(self, digests: list[str]) -> None:
        """Replace the sidecar atomically (and durably: it is tiny) with `digests`, one a line."""
        tmp = self.folder / "state.pt.sha256.tmp"
        try:
            with open(tmp, "w") as file:
                file.write("".join(f"{d}\n" for d in dict.fromkeys(digests)))
                file.flush()
                os.fsync(file.fileno())
            os.replace(tmp, self.digest_path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise write_failure(self.digest_path, exc) from None

    def verify(self) -> None:
        """Raise CheckpointError when state.pt matches none of the digests its sidecar lists; without a sidecar (a
        checkpoint written before digests were) it is used unchecked, and a warning says so."""
        accepted = self.accepted_digests()
        if accepted is None:
            logging.getLogger("tvrl_bench.trial").warning(
                "%s has no SHA-256 sidecar (%s; written by an older tvrl-bench): resuming from it unverified; the "
                "next checkpoint this trial saves gets one", self.state_path, self.digest_path.name)
            return
        try:
            digest = file_sha256(self.state_path)
        except OSError as exc:
            raise CheckpointError(
                f"{self.state_path}: the checkpoint cannot be read ({exc}). Restore it from a backup, or delete the "
                f"folder {self.folder} to start this trial anew"
            ) from None
        if digest not in accepted:
            raise CheckpointError(
                f"{self.state_path}: the checkpoint does not match the SHA-256 written with it "
                f"({self.digest_path.name}): it was changed or damaged after it was saved, and it is not used. Restore "
                f"it from a backup, or delete the folder {self.folder} to start this trial anew"
            )

    def load(self) -> dict[str, Any] | None:
        """The saved state (tensors memory-mapped), or None when there is none; CheckpointError when it is damaged."""
        import torch

        if not self.state_path.is_file():
            return None
        self.verify()  # before unpickling: a damaged file is refused, never half-read
        try:
            # mmap: the processes of a trial each read the checkpoint without each holding a copy in memory
            return torch.load(self.state_path, map_location="cpu", weights_only=False, mmap=True)
        except (RuntimeError, EOFError, OSError, pickle.UnpicklingError) as exc:  # truncated or overwritten
            first = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise CheckpointError(
                f"{self.state_path}: the checkpoint cannot be read ({first}); it is damaged. Delete the folder "
                f"{self.folder} to start this trial anew, or restore the file from a backup"
            ) from None


def file_sha256(path: Path) -> str:
    """The SHA-256 hex digest of a file, read in chunks (no copy of it in memory)."""
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()
