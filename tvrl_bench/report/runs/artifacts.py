"""What the page reads from the trials' MLflow artifacts (docs/report.md, run contract): the final evaluation's
per-video records (`eval/results.json`), the final sample videos (`samples/final/index.json` and its mp4 files)
and the credit heatmaps (`credit/step_NNNNNN.png`). A run without one of them gives None, never an error: the
page says what is missing.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_STEP = re.compile(r"step_(\d+)\.png$")


@dataclass
class Sample:
    """One final sample video: its position in the eval prompts, prompt, checks, seed and mp4 bytes."""

    index: int
    prompt: str
    checks: list[str]
    seed: str
    video: bytes


@dataclass
class Heatmap:
    step: int
    png: bytes


@dataclass
class ArtifactReader:
    """Downloads a run's artifacts once each into a temporary folder (close() removes it)."""

    client: Any
    _tmp: tempfile.TemporaryDirectory = field(default_factory=lambda: tempfile.TemporaryDirectory(prefix="tvrl-page-"))
    _records: dict[tuple[str, str], list[dict] | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # downloads, quietly

    def close(self) -> None:
        self._tmp.cleanup()

    def _download(self, run_id: str, path: str) -> Path | None:
        target = Path(self._tmp.name) / run_id / path.replace("/", "_")
        target.mkdir(parents=True, exist_ok=True)
        try:
            return Path(self.client.download_artifacts(run_id, path, str(target)))
        except Exception as exc:  # not logged, or an artifact store that cannot be read: the page says so
            log.debug("run %s has no artifact %s (%s)", run_id, path, exc)
            return None

    def file(self, run_id: str, path: str) -> Path | None:
        """A run's artifact at `path`, downloaded (None when the run has none there)."""
        return self._download(run_id, path)

    def records(self, run_id: str, prefix: str = "eval") -> list[dict] | None:
        """The per-video records of the run's final evaluation (`eval/results.json`) or, with prefix "wide_eval",
        of its wide evaluation (`wide_eval/results.json`); None when it logged none."""
        if (run_id, prefix) not in self._records:
            path = self._download(run_id, f"{prefix}/results.json")
            records = None
            if path is not None and path.is_file():
                try:
                    loaded = json.loads(path.read_text(encoding="utf-8"))
                    records = [r for r in loaded if isinstance(r, dict)] if isinstance(loaded, list) else None
                except (OSError, ValueError):
                    records = None
            self._records[(run_id, prefix)] = records
        return self._records[(run_id, prefix)]

    def prompt_scores(self, run_id: str, prefix: str = "eval") -> dict[tuple[int, str], float] | None:
        """{(index, prompt): the record's `score`} of every record with a numeric score (of `records(run_id,
        prefix)`), or None when the run's records carry none (an evaluator without per-video scores)."""
        records = self.records(run_id, prefix)
        if not records:
            return None
        out = {}
        for i, r in enumerate(records):
            score = r.get("score")
            if isinstance(score, (int, float)) and not isinstance(score, bool):
                out[(int(r.get("index", i)), str(r.get("prompt", "")))] = float(score)
        return out or None

    def record(self, run_id: str, index: int, prompt: str) -> dict | None:
        """The run's final record of eval prompt `index` (with that prompt), or None."""
        for i, r in enumerate(self.records(run_id) or []):
            if int(r.get("index", i)) == index and str(r.get("prompt", prompt)) == prompt:
                return r
        return None

    def samples(self, run_id: str, limit: int) -> list[Sample] | None:
        """The run's first `limit` final sample videos, or None when it logged none."""
        folder = self._download(run_id, "samples/final")
        if folder is None or not (folder / "index.json").is_file():
            return None
        try:
            index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        out = []
        for i, entry in enumerate(sorted(index, key=lambda e: int(e.get("index", 0)))[:limit]):
            video = folder / str(entry.get("file", ""))
            if not video.is_file():
                continue
            out.append(Sample(int(entry.get("index", i)), str(entry.get("prompt", "")),
                              [str(c) for c in entry.get("checks", [])], str(entry.get("seed", "")),
                              video.read_bytes()))
        return out or None

    def first_heatmap(self, run_id: str) -> Heatmap | None:
        """The run's earliest credit heatmap (`credit/step_*.png`: step 1 is the first rollout of the first step,
        drawn before any update, so every method of one seed maps the same video there), or None."""
        try:
            files = self.client.list_artifacts(run_id, "credit")
        except Exception:  # a run without artifacts, or an unreachable artifact store
            return None
        found = sorted((int(m.group(1)), f.path) for f in files if not f.is_dir and (m := _STEP.search(f.path)))
        if not found:
            return None
        step, artifact = found[0]
        path = self._download(run_id, artifact)
        if path is None or not path.is_file():
            return None
        return Heatmap(step, path.read_bytes())
