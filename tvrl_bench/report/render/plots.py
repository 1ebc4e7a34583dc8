"""Plots beside the tables: training curves per cell (mean and band over seeds) and the latest credit heatmaps.

Curves read the metric histories of at most `max_runs_per_cell` runs per cell (its lowest seeds; the legend says
how many) through runs/histories.py: one query per metric on a SQL tracking store, else one MLflow request per run.
Heatmaps take, for every cell, the latest `credit/step_*.png` artifact of its lowest-seed run.
Figures are drawn with matplotlib's object API (no pyplot, no global backend change).
"""

from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tvrl_bench.report.runs.histories import HistoryCache
from tvrl_bench.report.tables.table_result import CellRuns, TableResult

_STEP = re.compile(r"step_(\d+)\.png$")


def curve_stats(histories: list[pd.Series]) -> pd.DataFrame:
    """Per step: mean, std (ddof = 1, NaN with one run) and n over the runs' histories (steps[S] index)."""
    if not histories:
        return pd.DataFrame(columns=["mean", "std", "n"])
    table = pd.concat(histories, axis=1)
    return pd.DataFrame({"mean": table.mean(axis=1), "std": table.std(axis=1, ddof=1), "n": table.count(axis=1)})


def cell_curves(
    cells: list[CellRuns], metric: str, cache: HistoryCache, max_runs_per_cell: int = 10
) -> list[tuple[CellRuns, pd.DataFrame, int]]:
    """(cell, curve_stats, runs used) for every cell that logged `metric`."""
    cache.prefetch([r for cell in cells for r in cell.run_ids[:max_runs_per_cell]], metric)
    out = []
    for cell in cells:
        used = cell.run_ids[:max_runs_per_cell]
        histories = [h for h in (cache.get(r, metric) for r in used) if len(h)]
        if histories:
            out.append((cell, curve_stats(histories), len(histories)))
    return out


def plot_curves(
    result: TableResult, metrics: tuple[str, ...], cache: HistoryCache, path: Path, max_runs_per_cell: int = 10
) -> Path | None:
    """One panel per metric, one line (mean) and band (± std) per cell; None when no cell logged them."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = [(m, cell_curves(result.cells, m, cache, max_runs_per_cell)) for m in metrics]
    panels = [(m, curves) for m, curves in panels if curves]
    if not panels:
        return None
    fig = Figure(figsize=(5.5 * len(panels), 3.6))
    FigureCanvasAgg(fig)
    # one colour per cell in every panel, whichever cells a panel has
    palette = [f"C{i % 10}" for i in range(len(result.cells))]
    colour = {id(cell): palette[i] for i, cell in enumerate(result.cells)}
    for i, (metric, curves) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        for cell, stats, used in curves:
            steps = stats.index.to_numpy(dtype=float)
            label, c = f"{cell.label} (n={used})", colour.get(id(cell))
            if len(steps) == 1:  # a single evaluation (an untrained base row): a dashed reference level
                ax.axhline(float(stats["mean"].iloc[0]), color=c, linestyle="--", linewidth=1.2, label=label)
                continue
            (line,) = ax.plot(steps, stats["mean"].to_numpy(), label=label, linewidth=1.4, color=c)
            std = stats["std"].to_numpy()
            if np.isfinite(std).any():
                ax.fill_between(steps, stats["mean"] - std, stats["mean"] + std, color=line.get_color(), alpha=0.2,
                                linewidth=0)
        ax.set_title(metric, fontsize=10)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"{result.title}: mean ± std over seeds", fontsize=11)
    fig.subplots_adjust(left=0.8 / fig.get_figwidth(), right=0.98, bottom=0.15, top=0.84, wspace=0.22)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    return path


def latest_heatmap(client: Any, run_id: str) -> tuple[str, int] | None:
    """(artifact path, step) of the run's latest credit/step_<N>.png, or None."""
    try:
        files = client.list_artifacts(run_id, "credit")
    except Exception:  # a run without artifacts, or an unreachable artifact store
        return None
    found = [(int(m.group(1)), f.path) for f in files if not f.is_dir and (m := _STEP.search(f.path))]
    if not found:
        return None
    step, artifact = max(found)
    return artifact, step


def plot_heatmaps(result: TableResult, client: Any, path: Path) -> Path | None:
    """A grid with the latest credit heatmap of each cell's lowest-seed run; None when no run has one."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.image import imread

    panels = []
    with tempfile.TemporaryDirectory(prefix="tvrl-heatmaps-") as tmp:
        for i, cell in enumerate(result.cells):
            if not cell.run_ids:
                continue
            latest = latest_heatmap(client, cell.run_ids[0])
            if latest is None:
                continue
            artifact, step = latest
            local = client.download_artifacts(cell.run_ids[0], artifact, str(Path(tmp) / str(i)))
            panels.append((cell, step, imread(local)))
        if not panels:
            return None
        cols = min(4, len(panels))
        rows = math.ceil(len(panels) / cols)
        fig = Figure(figsize=(3.2 * cols, 3.0 * rows))
        FigureCanvasAgg(fig)
        for i, (cell, step, image) in enumerate(panels):
            ax = fig.add_subplot(rows, cols, i + 1)
            ax.imshow(image)
            ax.set_title(f"{cell.label}\nseed {cell.seeds[0]}, step {step}", fontsize=8)
            ax.axis("off")
        fig.suptitle(f"{result.title}: latest credit heatmaps", fontsize=11)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=90)
    return path
