"""The study page, `reports/<study>/index.html`: one self-contained file a researcher opens from disk, with the
study's tables and a one-line answer per table, the eval curves per method, the reward-hacking panel, the final
videos of every method side by side, the credit maps per router, and the probability of improvement and IQM.
Its numbers are also written as CSV beside it (`page_hacking.csv`, `page_improvement.csv`, `page_iqm.csv`), all
four files together or none (report/files.py): a page that cannot be written raises `NotWritten` and leaves the
previous page and CSVs as they were.

`tvrl-report` and the end of every `tvrl-sweep` write it through `report.pipeline.regenerate` (docs/report.md).

    from tvrl_bench.report.study_page import write_study_page
    page = write_study_page(runs, client, folder, tables)
    # {"path": ".../index.html", "files": [...], "flags": ["reward hacking? ..."], "source": "eval", "seconds": ...}
"""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any

from tvrl_bench.report.runs.study import StudyRuns
from tvrl_bench.report.tables.table_result import TableResult

PAGE = "index.html"
CSV_FILES = ("page_hacking.csv", "page_improvement.csv", "page_iqm.csv")

__all__ = ["CSV_FILES", "PAGE", "page_lines", "write_study_page"]


def write_study_page(runs: StudyRuns, client: Any, folder: str | Path, tables: list[TableResult] | tuple = (),
                     cache: Any = None, max_videos: int = 4, resamples: int = 2_000) -> dict[str, Any]:
    """Write `<folder>/index.html` and its CSV files for the study's runs, together or not at all (NotWritten,
    naming the file and why); returns {"path", "files", "flags" (one line per method flagged for reward hacking),
    "source" (`eval` or `wide_eval`), "seconds"}.

    tables: the TableResults just regenerated (other `<table>.html` files already in `folder` are shown too);
    cache: a `report.plots.HistoryCache` shared with the tables' curves (one is made when None)."""
    from tvrl_bench.report.files import check_writable, write_together
    from tvrl_bench.report.runs.histories import HistoryCache
    from tvrl_bench.report.study_page.build import gather
    from tvrl_bench.report.study_page.html import render

    start = time.perf_counter()
    folder = Path(folder)
    check_writable(folder)  # before minutes of gathering
    data = gather(runs, client, cache or HistoryCache(client), list(tables), folder, max_videos, resamples)
    csvs = csv_texts(data)
    paths = write_together(folder, {PAGE: render(data, list(csvs)), **csvs})
    return {"path": str(paths[0]), "files": [str(p) for p in paths], "flags": data.flags,
            "source": data.source.prefix, "seconds": time.perf_counter() - start}


def _num(value: float | None) -> str:
    if value is None or value != value:  # NaN
        return ""
    return repr(float(value))


def csv_texts(data: Any) -> dict[str, str]:
    """{file name: text} of the hacking panel, the pairwise comparisons and the IQMs at full precision (x 100 like
    the page; empty where the page shows a dash)."""
    hacking = [["method", "critic", "source", "baseline", "seeds",
                "critic_delta", "critic_ci_low", "critic_ci_high",
                "evaluator_delta", "evaluator_ci_low", "evaluator_ci_high",
                "gap", "gap_ci_low", "gap_ci_high", "flagged", "missing", "verdict", "scale",
                *(f"{n}{end}" for n in ("critic_gain", "evaluator_gain", "gain_gap", "false_yes_delta")
                  for end in ("", "_ci_low", "_ci_high")), "efficiency"]]
    for r in data.hacking:
        seeds = r.gap.n_treated if r.gap is not None else (r.evaluator.n_treated if r.evaluator else "")
        cells = _stat_cells([r.critic, r.evaluator, r.gap])
        gains = _stat_cells([r.critic_gain, r.evaluator_gain, r.gain_gap, r.false_yes])
        hacking.append([r.method, r.critic_name or "", data.source.prefix, r.baseline, seeds, *cells,
                        int(r.flagged), r.missing or "", r.verdict, r.scale, *gains, _num(r.efficiency)])
    comparisons = data.comparisons
    improvement = [["a", "b", "source", "p_a_beats_b", "ci_low", "ci_high", "seeds_a", "seeds_b", "tasks",
                    "delta_a_minus_b", "delta_ci_low", "delta_ci_high"]]
    for p in comparisons.pairs if comparisons else []:
        est, d = p.improvement, p.delta
        improvement.append([p.a, p.b, data.source.prefix,
                            *((_num(est.value), _num(est.low), _num(est.high), est.runs[0], est.runs[1], est.tasks)
                              if est else ("",) * 6),
                            *((_num(d.delta), _num(d.ci_low), _num(d.ci_high)) if d else ("",) * 3)])
    iqms = [["method", "source", "iqm", "ci_low", "ci_high", "seeds", "tasks", "missing"]]
    for q in comparisons.iqms if comparisons else []:
        est = q.estimate
        iqms.append([q.method, data.source.prefix,
                     *((_num(est.value), _num(est.low), _num(est.high), est.runs[0], est.tasks) if est
                       else ("",) * 5), q.missing or ""])
    return {name: _csv(rows) for name, rows in zip(CSV_FILES, (hacking, improvement, iqms))}


def _stat_cells(stats: list) -> list[str]:
    """(delta, ci_low, ci_high) of each DeltaStat, empty for a missing one."""
    return [x for s in stats for x in ((_num(s.delta), _num(s.ci_low), _num(s.ci_high)) if s else ("",) * 3)]


def _csv(rows: list[list]) -> str:
    out = io.StringIO(newline="")
    csv.writer(out).writerows(rows)
    return out.getvalue()


def page_lines(page: dict | None) -> list[str]:
    """The study page's path and its reward-hacking flags (also the last lines of `tvrl-sweep` before its links);
    none for a page that could not be written (the command reports that on stderr)."""
    if not page or "error" in page:
        return []
    lines = [f"  study page: {page['path']} (final scores from {page['source']}/*)"]
    lines += [f"  {line}" for line in page["flags"]]
    return lines
