"""Trial checkpoints: trainable weights, optimizer state, the next step, and the MLflow run to resume.

Layout: <folder>/state.pt (written atomically) and <folder>/trial.json ({"run_id", "step", "finished",
"attempt"}).
All randomness is derived from (seed, step), so no RNG state needs saving.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch


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
        data = json.loads(self.info_path.read_text())
        return CheckpointInfo(
            data.get("run_id"), int(data.get("step", 0)), bool(data.get("finished", False)), int(data.get("attempt", 1))
        )

    def write_info(self, run_id: str | None, step: int, attempt: int | None = None, finished: bool = False) -> None:
        previous = self.info()
        attempt = attempt if attempt is not None else (previous.attempt if previous else 1)
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.info_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"run_id": run_id, "step": step, "finished": finished, "attempt": attempt}))
        os.replace(tmp, self.info_path)

    def save(self, step: int, run_id: str | None, parameters: dict[str, torch.Tensor], optimizer: Any, extra: dict) -> None:
        """Save the state after `step` completed steps (the next step to run is `step`)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / "state.pt.tmp"
        torch.save({"step": step, "parameters": parameters, "optimizer": optimizer.state_dict(), "extra": extra}, tmp)
        os.replace(tmp, self.state_path)
        self.write_info(run_id, step)

    def load(self) -> dict[str, Any] | None:
        if not self.state_path.is_file():
            return None
        return torch.load(self.state_path, map_location="cpu", weights_only=False)
