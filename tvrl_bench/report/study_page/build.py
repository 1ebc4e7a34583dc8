"""Everything the study page shows, gathered from a study's runs and artifacts (rendering is html.py)."""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tvrl_bench.report.runs.artifacts import ArtifactReader
from tvrl_bench.report.runs.decisions import StudyDecisions, study_decisions
from tvrl_bench.report.runs.frames import logged_nan
from tvrl_bench.report.runs.study import StudyRuns
from tvrl_bench.report.study_page.comparisons import Comparisons, compare
from tvrl_bench.report.study_page.critic_cards import CardSummary, read_cards, summarize
from tvrl_bench.report.study_page.gain_curves import gain_curves
from tvrl_bench.report.study_page.hacking import HackingRow, hacking_rows
from tvrl_bench.report.study_page.methods import Method, Source, choose_source, common_seed, group_methods
from tvrl_bench.report.study_page.svg import Curve, colour, curves_svg
from tvrl_bench.report.study_page.tables import TableSection, table_sections
from tvrl_bench.report.tables.table_result import TableResult

CURVE_METRICS = ("eval/overall", "eval/critic_reward")
MAX_MEDIA_METHODS = 12  # videos and credit maps of the first methods only (each costs a download)
EVAL_SUBSET_PARAM = "params.training.trial.eval_subset"


@dataclass
class VideoCell:
    method: str
    video: str | None  # base64 mp4
    record: dict | None  # the evaluator's final record of this prompt, or None
    missing: str | None = None


@dataclass
class PromptRow:
    index: int
    prompt: str
    checks: list[str]
    cells: list[VideoCell]


@dataclass
class HeatmapCell:
    method: str
    credit: str | None
    step: int
    png: str  # base64


@dataclass
class PageData:
    study: str
    runs_note: str
    source: Source
    methods: list[Method]
    colours: dict[str, str]
    tables: list[TableSection] = field(default_factory=list)
    curves: list[tuple[str, str]] = field(default_factory=list)  # (metric, svg)
    curve_notes: list[str] = field(default_factory=list)
    hacking: list[HackingRow] = field(default_factory=list)
    gain_curves: list[tuple[str, str]] = field(default_factory=list)  # (method, svg): gain_curves.py
    gain_curve_notes: list[str] = field(default_factory=list)
    comparisons: Comparisons | None = None
    video_seed: str | None = None
    videos: list[PromptRow] = field(default_factory=list)
    video_notes: list[str] = field(default_factory=list)
    heatmaps: list[HeatmapCell] = field(default_factory=list)
    heatmap_notes: list[str] = field(default_factory=list)
    decisions: StudyDecisions | None = None
    critic_cards: list[CardSummary] = field(default_factory=list)
    study_critics: list[str] = field(default_factory=list)  # the `reward` params of the study's methods
    finished_trials: int = 0
    base_rows: bool = False

    @property
    def flags(self) -> list[str]:
        """A line per flagged method, reward hacking first, then overstated critic gains."""
        return [row.line() for row in self.flagged]

    @property
    def flagged(self) -> list[HackingRow]:
        """The flagged rows, reward hacking first, then overstated critic gains."""
        return sorted((row for row in self.hacking if row.flagged), key=lambda row: row.verdict != "hacking")


def gather(runs: StudyRuns, client: Any, cache: Any, tables: list[TableResult], folder: Path,
           max_videos: int = 4, resamples: int = 2_000) -> PageData:
    """The page's data: tables, curves, the hacking panel, comparisons, videos and credit maps."""
    methods = group_methods(runs.trials)
    source = choose_source(runs.trials)
    data = PageData(runs.study, _runs_note(runs) + _diverged_note(runs.trials, source), source, methods,
                    {m.label: colour(i) for i, m in enumerate(methods)})
    data.tables = table_sections(tables, folder)
    data.decisions = study_decisions(runs)
    data.finished_trials = len(runs.trials)
    data.base_rows = any(m.base for m in methods)
    run_ids = [str(r) for m in methods for r in m.runs["run_id"]]
    for metric in CURVE_METRICS:
        cache.prefetch(run_ids, metric)
    data.curves, data.curve_notes = _curves(methods, cache)
    data.hacking = hacking_rows(methods, source, _step_zero(runs.trials, cache))
    data.gain_curves, data.gain_curve_notes = gain_curves(methods, cache)
    reader = ArtifactReader(client)
    try:
        data.comparisons = compare(methods, source, reader.prompt_scores, resamples=resamples)
        cards = read_cards(reader.file, runs.parent.get("run_id") if runs.parent else None)
        data.critic_cards = summarize(cards) if cards else []
        data.study_critics = sorted({str(c) for m in methods if (c := m.param("reward"))})
        _videos(data, reader, max_videos)
        _heatmaps(data, reader)
    finally:
        reader.close()
    return data


def _runs_note(runs: StudyRuns) -> str:
    text = f"{len(runs.trials)} finished trial run{'s' if len(runs.trials) != 1 else ''}"
    status = runs.status_note()
    return text + (f". {status}" if status else "")


def _diverged_note(trials: pd.DataFrame, source: Source) -> str:
    """'. 2 runs diverged: ...' for the runs whose final score or critic reward is a NaN they logged, else ''."""
    metrics = (source.overall, source.critic)
    diverged = [m for m in metrics if logged_nan(trials, m).any()]
    runs = int(sum(logged_nan(trials, m) for m in metrics).astype(bool).sum()) if diverged else 0
    if not runs:
        return ""
    return (f". {runs} run{'s' if runs != 1 else ''} diverged ({' or '.join(diverged)} logged as NaN): left out "
            "of the comparisons below")


# ---- curves --------------------------------------------------------------------------------------------------------


def _curves(methods: list[Method], cache: Any) -> tuple[list[tuple[str, str]], list[str]]:
    out, notes = [], []
    for metric in CURVE_METRICS:
        curves = []
        for i, m in enumerate(methods):
            by_seed: dict[str, list[pd.Series]] = {}
            for run_id, seed in zip(m.runs["run_id"], m.runs["_seed"]):
                history = cache.get(str(run_id), metric)
                if len(history):
                    by_seed.setdefault(str(seed), []).append(history)
            if not by_seed:
                continue
            seeds = [pd.concat(h, axis=1).mean(axis=1) for h in by_seed.values()]
            table = pd.concat(seeds, axis=1)
            stats = pd.DataFrame({"mean": table.mean(axis=1), "std": table.std(axis=1, ddof=1)}).dropna(subset=["mean"])
            curves.append(Curve(m.label, colour(i), stats.index.to_numpy(dtype=float), 100 * stats["mean"].to_numpy(),
                                100 * stats["std"].to_numpy(), len(seeds)))
        if curves:
            out.append((metric, curves_svg(curves, f"{metric} (×100): mean ± std over seeds")))
        else:
            notes.append(f"No run logged {metric}.")
    return out, notes


def _step_zero(trials: pd.DataFrame, cache: Any):
    """(run id, metric) -> the metric at step 0, for runs that evaluated every eval prompt before training
    (`training.trial.eval_subset` unset) and trained after it; else None."""
    subset = dict(zip(trials["run_id"].astype(str), trials[EVAL_SUBSET_PARAM])) if EVAL_SUBSET_PARAM in trials else {}

    def value(run_id: str, metric: str) -> float | None:
        if subset.get(run_id) not in (None, "None") and not (isinstance(subset.get(run_id), float)
                                                            and math.isnan(subset[run_id])):
            return None
        history = cache.get(run_id, metric)
        if len(history) < 2 or history.index[0] != 0:
            return None
        return float(history.iloc[0])

    return value


# ---- videos and credit maps ----------------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _videos(data: PageData, reader: ArtifactReader, limit: int) -> None:
    methods = data.methods[:MAX_MEDIA_METHODS]
    if len(data.methods) > MAX_MEDIA_METHODS:
        data.video_notes.append(f"Videos and credit maps of the first {MAX_MEDIA_METHODS} of {len(data.methods)} "
                                "methods.")
    seed = common_seed(methods)
    if seed is None:
        data.video_notes.append("No seed is shared by every method: no videos side by side.")
        return
    data.video_seed = seed
    prompts: dict[tuple[int, str], PromptRow] = {}
    by_method = {}
    for m in methods:
        run_id = m.run_of(seed)
        samples = reader.samples(run_id, limit) if run_id else None
        by_method[m.label] = (run_id, {(s.index, s.prompt): s for s in samples or []})
        if not samples:
            data.video_notes.append(f"{m.label}: its seed-{seed} run logged no final sample videos (samples/final/).")
        for s in samples or []:
            prompts.setdefault((s.index, s.prompt), PromptRow(s.index, s.prompt, s.checks, []))
    for key in sorted(prompts)[:limit]:
        row = prompts[key]
        for m in methods:
            run_id, samples = by_method[m.label]
            sample = samples.get(key)
            if sample is None:
                row.cells.append(VideoCell(m.label, None, None, "no video of this prompt"))
                continue
            record = reader.record(run_id, sample.index, sample.prompt)
            row.cells.append(VideoCell(m.label, _b64(sample.video), record,
                                       None if record else "no evaluator record (eval/results.json)"))
        data.videos.append(row)


def _heatmaps(data: PageData, reader: ArtifactReader) -> None:
    seed = data.video_seed
    for m in data.methods[:MAX_MEDIA_METHODS]:
        if m.base:
            continue
        run_id = m.run_of(seed) if seed is not None else str(m.runs["run_id"].iloc[0])
        heatmap = reader.first_heatmap(run_id) if run_id else None
        if heatmap is None:
            data.heatmap_notes.append(f"{m.label}: no credit heatmap logged (credit/step_*.png).")
            continue
        data.heatmaps.append(HeatmapCell(m.label, m.param("credit"), heatmap.step, _b64(heatmap.png)))

