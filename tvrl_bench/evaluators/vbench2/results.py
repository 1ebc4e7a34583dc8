"""Reading VBench-2.0's results JSON and aggregating its dimensions into the 5 categories and Overall.

A results file is what VBench-2.0's `evaluate.py` writes to `<output_path>/results_<time>_eval_results.json`:
a JSON object mapping each evaluated dimension to `[score, records]`, where `score` is the dimension's score on
its 0-1 scale and `records` its per-video list `[{"video_path": ..., "video_results": <score or -1>}, ...]`
(one record per prompt for Diversity). VBench-2.0's `scripts/cal_final_score.py` reads `value[0]` of every key
(with `_` read as a space); a bare number is accepted here too, for results written by hand.

Aggregation follows `cal_final_score.py`: category = mean of its dimensions, Overall = mean of the 5 categories.
What happens when dimensions are absent is a choice (`missing`):
- "error" (default): refuse, naming the absent dimensions;
- "zero": count each absent dimension as 0, as `cal_final_score.py` itself does (a leaderboard-comparable total
  only when nothing is absent);
- "partial": a category is the mean of its present dimensions, a category with none is left out, and Overall is
  the mean of the present categories. Not comparable with published VBench-2.0 totals.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from tvrl_bench.evaluators.vbench2.spec import (
    CATEGORIES,
    DIMENSIONS,
    INVALID_SCORE,
    MISSING_POLICIES,
    canonical_dimension,
    metric_key,
)

RESULTS_SUFFIX = "_eval_results.json"


class ResultsError(ValueError):
    """A VBench-2.0 results file is malformed, or the results cannot be aggregated; the message says the fix."""


@dataclass(frozen=True)
class DimensionResult:
    """One dimension's score (0-1) and its per-video records, as read from `source`."""

    dimension: str
    score: float
    records: tuple[dict[str, Any], ...]
    source: str


def read_results_file(path: str | Path) -> dict[str, DimensionResult]:
    """The dimensions of one VBench-2.0 results JSON file, keyed by VBench-2.0's dimension name."""
    path = Path(path)
    if not path.is_file():
        raise ResultsError(f"VBench-2.0 results file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}); pass a VBench-2.0 "
                           f"'*{RESULTS_SUFFIX}' file") from None
    if not isinstance(data, dict):
        raise ResultsError(
            f"{path}: a VBench-2.0 results file is a JSON object mapping dimensions to [score, records], "
            f"found a JSON {type(data).__name__}; pass the '*{RESULTS_SUFFIX}' file, not the '*_full_info.json' one"
        )
    found: dict[str, DimensionResult] = {}
    for key, value in data.items():
        dimension = canonical_dimension(key)
        if dimension is None:
            raise ResultsError(
                f"{path}: unknown VBench-2.0 dimension '{key}' (known: {', '.join(DIMENSIONS)}); "
                "remove the key or fix its spelling"
            )
        score, records = _score_and_records(value, path, key)
        if dimension in found:
            raise ResultsError(f"{path}: dimension {dimension} is given twice (as '{key}'); keep one")
        found[dimension] = DimensionResult(dimension, score, records, str(path))
    return found


def _score_and_records(value: Any, path: Path, key: str) -> tuple[float, tuple[dict[str, Any], ...]]:
    records: Any = ()
    if isinstance(value, list) and value:
        score, records = value[0], (value[1] if len(value) > 1 else ())
    else:
        score = value
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise ResultsError(
            f"{path}: '{key}' must be [score, records] with a finite number as score (VBench-2.0's format), "
            f"found {json.dumps(value)[:120]}"
        )
    if not isinstance(records, list) and records != ():
        raise ResultsError(f"{path}: the records of '{key}' must be a list of per-video objects")
    return float(score), tuple(r for r in records if isinstance(r, dict))


def results_files(path: str | Path) -> list[Path]:
    """`path` itself when it is a file; every `*_eval_results.json` below it (sorted) when it is a folder."""
    path = Path(path)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(path.rglob(f"*{RESULTS_SUFFIX}"))
        if not files:
            raise ResultsError(f"{path}: no VBench-2.0 results ('*{RESULTS_SUFFIX}') in this folder or below")
        return files
    raise ResultsError(f"VBench-2.0 results not found: {path}")


def load_results(paths: Iterable[str | Path]) -> dict[str, DimensionResult]:
    """All dimensions of the given results files and folders; a dimension found twice is an error."""
    merged: dict[str, DimensionResult] = {}
    for given in paths:
        for file in results_files(given):
            for dimension, result in read_results_file(file).items():
                if dimension in merged:
                    raise ResultsError(
                        f"dimension {dimension} is in both {merged[dimension].source} and {file}; "
                        "pass only one results file per dimension"
                    )
                merged[dimension] = result
    return merged


def aggregate(scores: Mapping[str, float], missing: str = "error") -> dict[str, float]:
    """Metrics from dimension scores: {"overall", the 5 categories, "dim/<dimension>"} on VBench-2.0's 0-1 scale.

    `scores` maps VBench-2.0 dimension names (see vbench2_spec.DIMENSIONS) to scores; `missing` says what to do
    about absent dimensions ("error", "zero" or "partial"; see the module docstring).
    """
    if missing not in MISSING_POLICIES:
        raise ResultsError(f"missing must be one of {', '.join(MISSING_POLICIES)}, got '{missing}'")
    unknown = [d for d in scores if d not in DIMENSIONS]
    if unknown:
        raise ResultsError(f"unknown VBench-2.0 dimensions {unknown}; known: {', '.join(DIMENSIONS)}")
    absent = [d for d in DIMENSIONS if d not in scores]
    if absent and missing == "error":
        raise ResultsError(
            f"VBench-2.0 results lack {len(absent)} of 18 dimensions: {', '.join(absent)}. Evaluate them too, or "
            "choose missing='zero' (VBench-2.0's cal_final_score counts an absent dimension as 0) or "
            "missing='partial' (means over the present dimensions only)"
        )
    categories: dict[str, float] = {}
    for category, members in CATEGORIES.items():
        if missing == "zero":
            values = [float(scores.get(d, 0.0)) for d in members]
        else:
            values = [float(scores[d]) for d in members if d in scores]
        if values:
            categories[category] = sum(values) / len(values)
    if not categories:
        raise ResultsError("no VBench-2.0 dimension was given: nothing to aggregate")
    metrics = {"overall": sum(categories.values()) / len(categories)}
    metrics.update(categories)
    metrics.update({metric_key(d): float(scores[d]) for d in DIMENSIONS if d in scores})
    return metrics


def score_lines(metrics: Mapping[str, float], dimensions: bool = False) -> list[str]:
    """`name=value` lines: optionally the dimensions, then the categories present, then `overall=<value>` last."""
    lines = []
    if dimensions:
        lines += [f"{metric_key(d)}={metrics[metric_key(d)]!r}" for d in DIMENSIONS if metric_key(d) in metrics]
    lines += [f"{c}={metrics[c]!r}" for c in CATEGORIES if c in metrics]
    lines.append(f"overall={metrics['overall']!r}")
    return lines


def video_score(value: Any) -> float | None:
    """A per-video result as a float; None for VBench-2.0's -1 (not judgeable) or a non-numeric value."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value == INVALID_SCORE:
        return None
    return float(value)
