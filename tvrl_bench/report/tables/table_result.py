"""The computed table every renderer (md, tex, html, csv) and the plots work from: columns, rows and their cells.

A cell is a ValueStat (mean ± std over seeds), a DeltaStat, a Number, a Count, an Interval, a Text (a staged
decision), a Blank (not applicable) or a Missing (expected but no data, with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tvrl_bench.report.stats.intervals import DeltaStat, ValueStat


@dataclass(frozen=True)
class Blank:
    """Not applicable here (a delta on the baseline row, a GRPO column on a base row): rendered empty."""


@dataclass(frozen=True)
class Missing:
    """Expected but no data: rendered as a dash, with the reason in the warnings."""

    reason: str


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Count:
    value: int


@dataclass(frozen=True)
class Interval:
    """A confidence interval; marked when it contains `null` (or is undefined)."""

    low: float
    high: float
    null: float

    @property
    def excludes_null(self) -> bool:
        return bool(self.low > self.null or self.high < self.null)


@dataclass(frozen=True)
class Text:
    """A word or two: a staged study's decision for the row ("larger, stage 1")."""

    value: str


Cell = ValueStat | DeltaStat | Number | Count | Interval | Text | Blank | Missing

# Column kinds and the cell types they hold: value -> ValueStat, delta -> DeltaStat, number -> Number,
# count -> Count, interval -> Interval, text -> Text (any of them may be Blank or Missing).
KINDS = ("value", "delta", "number", "count", "interval", "text")


@dataclass(frozen=True)
class Column:
    label: str
    kind: str


@dataclass
class Row:
    label: str
    cells: list[Cell]
    group: str | None = None

    def n_label(self) -> str:
        """Seeds per cell of this row: "3", or "2-3" when its cells differ, "0" when it has no data."""
        ns = sorted({c.n for c in self.cells if isinstance(c, ValueStat)})
        if not ns:
            return "0"
        return str(ns[0]) if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"


@dataclass
class CellRuns:
    """The runs of one cell (for plots): label, run ids and their seeds, ordered by seed."""

    label: str
    run_ids: list[str]
    seeds: list[str]


@dataclass
class TableResult:
    """A computed table: what every renderer (md, tex, html, csv) and the plots work from."""

    name: str
    kind: str
    study: str
    title: str
    caption: str
    row_header: str
    columns: list[Column]
    rows: list[Row]
    decimals: int = 2
    n_column: bool = True
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cells: list[CellRuns] = field(default_factory=list)
    # {param: its values} for the arm params the cells of its `by` rows pool (arms it does not show): no answer
    pooled: dict[str, list[str]] = field(default_factory=dict)

    def has_data(self) -> bool:
        return any(isinstance(c, (ValueStat, DeltaStat, Number, Count, Interval)) for r in self.rows for c in r.cells)
