"""The VBench-2.0 evaluator: writes videos the way VBench-2.0 names them, runs each dimension in VBench-2.0's own
environment, and aggregates its 18 dimensions into the 5 categories and Overall.

One evaluation (see layout.py, runner.py and results.py beside it):
1. video i of the batch becomes sample k of its VBench-2.0 prompt (k counts earlier videos of the same prompt)
   and is written once as `<work>/samples/<prompt[:180]>-<k>.mp4`, then linked into
   `<work>/videos/<run>/<Dimension>/` for every dimension of its prompt that reads it (3 samples; 20 Diversity);
2. `<work>/info/<Dimension>_full_info.json` lists the suite's entries of the prompts present;
3. each dimension runs `evaluate.py` in the VBench-2.0 environment (`<work>/logs/<Dimension>.log`);
4. `<work>/results/<Dimension>/*_eval_results.json` are read back and aggregated.
Metrics: `overall`, the 5 categories and `dim/<dimension>` on VBench-2.0's 0-1 scale. Raw records, one per
video: index, prompt, score (mean of the video's own per-video dimension scores; when it has none, of its
prompt's per-prompt scores; None when neither exists), vbench_prompt, sample, file, `dimensions` (its per-video
scores; None where VBench-2.0 marked it -1, not judgeable) and `prompt_dimensions` (per-prompt scores shared by
the prompt's samples: Diversity).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Sequence

import torch

from tvrl_bench.evaluators.base import Evaluator
from tvrl_bench.videoio import write_mp4
from tvrl_bench.evaluators.vbench2.catalog import PromptCatalog, load_catalog, read_full_info, vbench2_folder
from tvrl_bench.evaluators.vbench2.env import read_marker
from tvrl_bench.evaluators.vbench2.layout import Layout, link_or_copy, plan_layout
from tvrl_bench.evaluators.vbench2.results import DimensionResult, aggregate, read_results_file, video_score
from tvrl_bench.evaluators.vbench2.runner import DimensionRun, VBench2RunError, build_command, run_dimensions
from tvrl_bench.evaluators.vbench2.spec import (
    CATEGORIES,
    DIMENSIONS,
    MISSING_POLICIES,
    PER_PROMPT_DIMENSIONS,
    checked_dimension,
)
from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.rules import Checks, integer, one_of, positive
from tvrl_bench.registry import register


@register("evaluators", "vbench2")
class VBench2Evaluator(Evaluator):
    """VBench-2.0 (18 dimensions, 5 categories), run in VBench-2.0's own Python environment.

    env_dir: an environment made by `tvrl-bench vbench2 setup` (gives the Python and the VBench-2.0 folder);
    repo / python_executable: the VBench-2.0 folder and that environment's Python, given directly (override env_dir);
    full_info: a prompt-info JSON in VBench2_full_info.json's format (default: the checkout's own);
    dimensions: the dimensions to run (default all 18); missing: "error", "zero" or "partial" for absent
    dimensions (vbench2_results); fps: of the written mp4s; timeout_s: per dimension; gpus: run dimensions in
    parallel, one per listed GPU id; work_dir: where videos, logs and results go (default: a temporary folder,
    removed after a successful evaluation unless keep_work_dir; kept after a failure); load_ckpt_from_local and
    extra_args are passed to evaluate.py.
    """

    categories = tuple(CATEGORIES)

    CHECKS = Checks(missing=one_of(*MISSING_POLICIES), fps=integer(1, example="24"), timeout_s=positive("14400.0"))

    def __init__(
        self,
        env_dir: str | None = None,
        repo: str | None = None,
        python_executable: str | None = None,
        full_info: str | None = None,
        dimensions: Sequence[str] = DIMENSIONS,
        missing: str = "error",
        fps: int = 24,
        timeout_s: float = 4 * 3600.0,
        gpus: Sequence[str | int] = (),
        work_dir: str | None = None,
        keep_work_dir: bool = False,
        load_ckpt_from_local: bool = False,
        extra_args: Sequence[str] = (),
    ) -> None:
        marker = read_marker(env_dir) if env_dir else {}
        repo = repo or marker.get("repo")
        python_executable = python_executable or marker.get("python")
        if not repo or not python_executable:
            raise ConfigError(
                "evaluators.vbench2 needs VBench-2.0's environment: set evaluators.vbench2.env_dir to a folder made by "
                "`tvrl-bench vbench2 setup --env DIR`, or set both evaluators.vbench2.repo (the VBench-2.0 folder) "
                "and evaluators.vbench2.python_executable (that environment's python)"
            )
        self.folder = vbench2_folder(repo)
        self.python = str(Path(python_executable).expanduser())
        if os.sep in self.python and not os.access(self.python, os.X_OK):
            raise ConfigError(
                f"evaluators.vbench2.python_executable = {self.python} is not an executable file; "
                "point it at the VBench-2.0 environment's bin/python"
            )
        catalog = load_catalog(self.folder)
        if full_info:
            catalog = PromptCatalog(tuple(read_full_info(full_info)), str(full_info), catalog.aliases)
        self.catalog = catalog
        self.dimensions = tuple(checked_dimension(d) for d in dimensions)
        self.missing = missing
        self.fps = int(fps)
        self.timeout_s = float(timeout_s)
        self.gpus = tuple(str(g) for g in gpus)
        self.work_dir = work_dir
        self.keep_work_dir = keep_work_dir
        self.load_ckpt_from_local = load_ckpt_from_local
        self.extra_args = tuple(str(a) for a in extra_args)

    def evaluate_detailed(
        self, videos: torch.Tensor, prompts: list[str], checks: list[tuple[str, ...]]
    ) -> tuple[dict[str, float], list[dict[str, Any]]]:
        """(metrics, raw records) for videos[B, F, 3, H, W] in [0, 1]; video i was generated from prompts[i]."""
        if videos.dim() != 5 or videos.shape[2] != 3:
            raise ValueError(f"videos must be [B, F, 3, H, W], got shape {tuple(videos.shape)}")
        if len(prompts) != videos.shape[0]:
            raise ValueError(f"got {videos.shape[0]} videos but {len(prompts)} prompts; give one prompt per video")
        return self.evaluate_batches([(videos, prompts, checks)])

    def evaluate_batches(self, batches) -> tuple[dict[str, float], list[dict[str, Any]]]:
        """Write each batch's videos to disk as it arrives (nothing holds them all), then run VBench-2.0.

        A batch list that does not fit VBench-2.0's suite is refused before any dimension runs, and the files
        written so far are removed; a failing dimension keeps its work folder (the error names its log).
        """
        created = self.work_dir is not None and not Path(self.work_dir).exists()
        work = self._work_folder()
        try:
            prompts, layout = self._write_and_plan(work, batches)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            if created:
                shutil.rmtree(self.work_dir, ignore_errors=True)
            raise
        runs = self._prepare(work, work / "staging", layout)
        results_files = run_dimensions(runs, self.timeout_s, self.gpus)
        results = {d: self._read(d, path, runs) for d, path in results_files.items()}
        metrics = aggregate({d: r.score for d, r in results.items()}, self.missing)
        raw = self._records(prompts, layout, results)
        (work / "records.json").write_text(json.dumps({"metrics": metrics, "records": raw}, indent=2))
        if self.work_dir is None and not self.keep_work_dir:
            shutil.rmtree(work, ignore_errors=True)
        return metrics, raw

    def _write_and_plan(self, work: Path, batches) -> tuple[list[str], Layout]:
        """Write every video as staging/<index>.mp4 and place it in VBench-2.0's suite (checks coverage)."""
        prompts: list[str] = []
        for videos, batch_prompts, _ in batches:
            for video, prompt in zip(videos, batch_prompts):
                write_mp4(video, work / "staging" / f"{len(prompts)}.mp4", fps=self.fps)
                prompts.append(prompt)
        layout = plan_layout(prompts, self.catalog, self.dimensions)
        if self.missing == "error":
            absent = [d for d in DIMENSIONS if d not in layout.prompts_by_dimension]
            if absent:
                raise ValueError(
                    f"the eval prompts cover {18 - len(absent)} of VBench-2.0's 18 dimensions (none for "
                    f"{', '.join(absent)}), so Overall cannot be computed as VBench-2.0 defines it. Evaluate on "
                    "prompts of every dimension (datasets.vbench2), or set evaluators.vbench2.missing = 'partial'"
                )
        return prompts, layout

    def _work_folder(self) -> Path:
        if self.work_dir is None:
            return Path(tempfile.mkdtemp(prefix="tvrl-vbench2-"))
        Path(self.work_dir).mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="vbench2-", dir=self.work_dir))

    def _prepare(self, work: Path, staging: Path, layout: Layout) -> list[DimensionRun]:
        """Name the written videos, write the per-dimension prompt info and the commands (module docstring)."""
        samples = work / "samples"
        samples.mkdir(parents=True, exist_ok=True)
        for slot in layout.slots:
            os.replace(staging / f"{slot.index}.mp4", samples / slot.name)
        # VBench-2.0's Instance_Preservation names its scratch folder after the path part above the dimension
        # folder: a name unique to this evaluation keeps parallel evaluations apart.
        videos_root = work / "videos" / work.name
        runs = []
        for dimension in layout.dimensions:
            folder = videos_root / dimension
            folder.mkdir(parents=True, exist_ok=True)
            for slot in layout.reads[dimension]:
                link_or_copy(samples / slot.name, folder / slot.name)
            info = work / "info" / f"{dimension}_full_info.json"
            info.parent.mkdir(parents=True, exist_ok=True)
            entries = self.catalog.subset(dimension, set(layout.prompts_by_dimension[dimension]))
            info.write_text(json.dumps(entries, indent=2, ensure_ascii=False), encoding="utf-8")
            output = work / "results" / dimension
            command = build_command(
                self.python, self.folder, dimension, folder, output, info, self.load_ckpt_from_local, self.extra_args
            )
            runs.append(DimensionRun(dimension, command, self.folder, output, work / "logs" / f"{dimension}.log"))
        return runs

    def _read(self, dimension: str, path: Path, runs: list[DimensionRun]) -> DimensionResult:
        found = read_results_file(path)
        if dimension not in found:
            run = next(r for r in runs if r.dimension == dimension)
            raise VBench2RunError(
                f"VBench-2.0 dimension {dimension} wrote {path} without a '{dimension}' entry "
                f"(it has {', '.join(found) or 'none'}).\n    command: {run.describe()}\n    log: {run.log_path}"
            )
        return found[dimension]

    def _records(self, prompts: list[str], layout: Layout, results: dict[str, DimensionResult]) -> list[dict[str, Any]]:
        per_video: dict[int, dict[str, float | None]] = {s.index: {} for s in layout.slots}
        per_prompt: dict[int, dict[str, float | None]] = {s.index: {} for s in layout.slots}
        for dimension, result in results.items():
            for record in result.records:
                slot = layout.slot_of(dimension, Path(str(record.get("video_path", ""))).name)
                if slot is None:
                    continue
                value = video_score(record.get("video_results"))
                if dimension in PER_PROMPT_DIMENSIONS:
                    for s in layout.samples_of(dimension, slot.standard):
                        per_prompt[s.index][dimension] = value
                else:
                    per_video[slot.index][dimension] = value
        raw = []
        for slot in layout.slots:
            own = [v for v in per_video[slot.index].values() if v is not None]
            shared = [v for v in per_prompt[slot.index].values() if v is not None]
            chosen = own or shared
            raw.append({
                "index": slot.index,
                "prompt": prompts[slot.index],
                "score": sum(chosen) / len(chosen) if chosen else None,
                "vbench_prompt": slot.standard,
                "sample": slot.sample,
                "file": slot.name,
                "dimensions": per_video[slot.index],
                "prompt_dimensions": per_prompt[slot.index],
            })
        return raw
