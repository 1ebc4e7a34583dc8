"""Rendering a TableResult as CSV: the same numbers at full precision (columns in report/render/formats.py's
docstring)."""

from __future__ import annotations

import pandas as pd

from tvrl_bench.report.stats.intervals import DeltaStat, ValueStat
from tvrl_bench.report.tables.table_result import (Blank, Cell, Column, Count, Interval, Missing, Number, TableResult,
                                                  Text)


def csv_columns(column: Column) -> list[str]:
    """The CSV columns one table column becomes (see report/render/formats.py's docstring)."""
    label = column.label
    if column.kind == "value":
        return [label, f"{label} n", f"{label} std"]
    if column.kind == "delta":
        return [label, f"{label} ci_low", f"{label} ci_high"]
    if column.kind == "interval":
        return [f"{label} low", f"{label} high"]
    return [label]


def _csv_values(column: Column, cell: Cell) -> list[float | int | None]:
    nan = float("nan")
    width = len(csv_columns(column))
    if isinstance(cell, (Blank, Missing)):
        return [None if column.kind in ("count", "text") else nan] * width
    if isinstance(cell, Text):
        return [cell.value]
    if isinstance(cell, ValueStat):
        return [cell.mean, cell.n, cell.std]
    if isinstance(cell, DeltaStat):
        return [cell.delta, cell.ci_low, cell.ci_high]
    if isinstance(cell, Interval):
        return [cell.low, cell.high]
    if isinstance(cell, Number):
        return [cell.value]
    if isinstance(cell, Count):
        return [cell.value]
    raise TypeError(f"cannot write cell {cell!r}")


def csv_frame(result: TableResult) -> pd.DataFrame:
    """The table as plain numbers (0-100 scale for metrics), one row per table row."""
    first = result.row_header or "row"
    names = [first] + [name for col in result.columns for name in csv_columns(col)]
    records = []
    for row in result.rows:
        values: list[object] = [row.label]
        for col, cell in zip(result.columns, row.cells):
            values += _csv_values(col, cell)
        records.append(values)
    frame = pd.DataFrame(records, columns=names)
    for col in result.columns:
        if col.kind == "count" or col.kind == "value":
            name = col.label if col.kind == "count" else f"{col.label} n"
            frame[name] = pd.array(frame[name].tolist(), dtype="Int64")
    return frame


def to_csv(result: TableResult) -> str:
    return csv_frame(result).to_csv(index=False)
