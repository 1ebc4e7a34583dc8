"""The table definition types: what a parsed `reports/tables/<name>.toml` says a table shows.

A MetricTable (rows of param values, value / delta / category columns over MLflow metrics) or a WinrateTable (a
method against its opponents, from stored judgments). The TOML keys are documented in definitions.py.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

# A filter on params: {param: accepted values}, compared as strings (MLflow params).
Filter = dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class ParamAxis:
    """How the values of one param become rows (or win-rate opponents): which, in what order, with what labels."""

    name: str
    values: tuple[str, ...] | None = None
    order: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)

    def label(self, value: str) -> str:
        return self.labels.get(value, value)

    def arrange(self, present: list[str]) -> list[str]:
        """The values to show: `values` when given, else the present ones, `order` first then natural order."""
        if self.values is not None:
            return list(self.values)
        listed = [v for v in self.order if v in present]
        rest = sorted((v for v in set(present) if v not in self.order), key=natural_key)
        return listed + rest


@dataclass(frozen=True)
class FixedRow:
    label: str
    where: Filter
    position: str = "first"


@dataclass(frozen=True)
class ValueColumn:
    label: str
    metric: str
    where: Filter = field(default_factory=dict)


@dataclass(frozen=True)
class DeltaColumn:
    label: str
    metric: str
    where: Filter = field(default_factory=dict)
    baseline: dict[str, str] = field(default_factory=dict)
    paired: bool = False
    optional: bool = False  # left out of a study with no run of its baseline (a note says so)


@dataclass(frozen=True)
class HalfGainColumn:
    """Steps to half gain of `metric` (definition and computation: report/tables/half_gain.py)."""

    label: str
    metric: str
    where: Filter = field(default_factory=dict)


@dataclass(frozen=True)
class DecisionColumn:
    """A staged study's decision for each row's arm (the arm of the cell's runs, filtered by `where`): its verdict
    and the stage that decided it, recomputed from the study's runs (report/runs/decisions.py)."""

    label: str
    where: Filter = field(default_factory=dict)


# A baseline value meaning "any": the baseline cell does not filter that param (e.g. the base model's runs, which
# carry the first value of every study axis, as the baseline of every row).
ANY = "*"


# eval/<name> metrics that are not evaluator categories: the overall score, the critic's own score of the videos and
# its false-yes rate (training/false_yes.py)
NOT_CATEGORIES = ("overall", "critic_reward", "critic_false_yes")


@dataclass(frozen=True)
class CategoryColumns:
    include: str | tuple[str, ...]  # "present" or category names
    order: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    where: Filter = field(default_factory=dict)
    prefix: str = "eval/"

    def expand(self, metric_names: list[str]) -> list[ValueColumn]:
        """One value column per category, in a stable order (listed order first, then alphabetical)."""
        if self.include == "present":
            found = [
                m[len(self.prefix) :]
                for m in metric_names
                if m.startswith(self.prefix) and m[len(self.prefix) :] not in NOT_CATEGORIES and "/" not in m[len(self.prefix) :]
            ]
            names = [c for c in self.order if c in found] + sorted(c for c in found if c not in self.order)
        else:
            names = list(self.include)
        return [ValueColumn(self.labels.get(c, category_label(c)), self.prefix + c, self.where) for c in names]


@dataclass(frozen=True)
class MetricTable:
    """A table of evaluation metrics over cells of runs (see definitions.py for the TOML keys)."""

    name: str
    path: Path
    title: str
    caption: str
    row_header: str
    rows_by: tuple[ParamAxis, ...]
    row_label: str | None
    fixed_rows: tuple[FixedRow, ...]
    columns: tuple[ValueColumn | DeltaColumn | CategoryColumns | HalfGainColumn | DecisionColumn, ...]
    where: Filter = field(default_factory=dict)
    scale: float = 100.0
    decimals: int = 2
    curves: tuple[str, ...] = ()
    heatmaps: bool = False
    kind: str = "metrics"
    only_run: bool = False  # rows only for the `by` combinations some run has (else every combination)

    def required_params(self) -> list[str]:
        names = [a.name for a in self.rows_by] + list(self.where)
        for row in self.fixed_rows:
            names += list(row.where)
        for col in self.columns:
            names += list(col.where)
            if isinstance(col, DeltaColumn):
                names += [k for k, v in col.baseline.items() if v != ANY]
        return list(dict.fromkeys(names))


@dataclass(frozen=True)
class WinrateTable:
    """Win, loss, tie and win rate excluding ties of `method` against every opponent, from stored judgments."""

    name: str
    path: Path
    title: str
    caption: str
    row_header: str
    method: str
    label: str
    opponents: ParamAxis
    judge: str | None = None
    decimals: int = 2
    kind: str = "winrate"

    def accepts_judge(self, judge: str) -> bool:
        return self.judge is None or fnmatch.fnmatchcase(judge, self.judge)


TableDefinition = MetricTable | WinrateTable


def natural_key(value: str) -> tuple[Any, ...]:
    """Sort key: numbers by value ("2" < "10"), then text with embedded numbers compared numerically."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        parts = re.split(r"(\d+)", str(value))
        return (1, 0.0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts))


def category_label(name: str) -> str:
    """'human_fidelity' -> 'Human fidelity'."""
    text = name.replace("_", " ").strip()
    return text[:1].upper() + text[1:]
