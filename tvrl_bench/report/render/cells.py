"""The texts of a table's cells and rows, shared by every renderer (formats in report/render/formats.py's docstring)."""

from __future__ import annotations

import math

from tvrl_bench.report.stats.intervals import DeltaStat, ValueStat
from tvrl_bench.report.tables.table_result import Blank, Cell, Count, Interval, Missing, Number, TableResult, Text

MARK = "†"
DASH = "—"


def cell_text(cell: Cell, decimals: int = 2) -> str:
    """The rendered text of one cell (Unicode; the LaTeX renderer translates it)."""
    d = decimals
    if isinstance(cell, Blank):
        return ""
    if isinstance(cell, Missing):
        return DASH
    if isinstance(cell, ValueStat):
        if math.isnan(cell.std):
            return f"{cell.mean:.{d}f}"
        return f"{cell.mean:.{d}f} ± {cell.std:.{d}f}"
    if isinstance(cell, DeltaStat):
        if math.isnan(cell.ci_low):
            return f"{cell.delta:+.{d}f} [n/a]{MARK}"
        mark = "" if cell.excludes_zero else MARK
        return f"{cell.delta:+.{d}f} [{cell.ci_low:+.{d}f}, {cell.ci_high:+.{d}f}]{mark}"
    if isinstance(cell, Number):
        return DASH if math.isnan(cell.value) else f"{cell.value:.{d}f}"
    if isinstance(cell, Count):
        return str(cell.value)
    if isinstance(cell, Text):
        return cell.value
    if isinstance(cell, Interval):
        if math.isnan(cell.low):
            return f"n/a{MARK}"
        mark = "" if cell.excludes_null else MARK
        return f"[{cell.low:.{d}f}, {cell.high:.{d}f}]{mark}"
    raise TypeError(f"cannot render cell {cell!r}")


def table_header(result: TableResult) -> list[str]:
    """The header row: the row header, each column's label, and "n" when the table has an n column."""
    labels = [result.row_header] + [c.label for c in result.columns]
    return labels + (["n"] if result.n_column else [])


def table_body(result: TableResult) -> list[list[str]]:
    """Each row's texts: its label, its cells' texts (`cell_text`), and its n label when the table has an n column."""
    body = []
    for row in result.rows:
        texts = [row.label] + [cell_text(c, result.decimals) for c in row.cells]
        body.append(texts + ([row.n_label()] if result.n_column else []))
    return body


def group_starts(result: TableResult) -> list[bool]:
    """For each row, whether it starts a new group (a rule is drawn above it)."""
    starts = []
    for i, row in enumerate(result.rows):
        starts.append(i > 0 and row.group != result.rows[i - 1].group)
    return starts
