"""Parsing a table definition: TOML data -> a checked MetricTable or WinrateTable (keys in definitions.py).

Every error is a ReportError naming the file and the offending key, with a suggestion for a misspelt key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tvrl_bench import registry
from tvrl_bench.report.errors import ReportError
from tvrl_bench.report.tables.definition_types import (CategoryColumns, DecisionColumn, DeltaColumn, Filter, FixedRow,
                                                       HalfGainColumn, MetricTable, ParamAxis, TableDefinition,
                                                       ValueColumn, WinrateTable)

_METRIC_KEYS = {"kind", "title", "caption", "row_header", "where", "scale", "decimals", "curves", "heatmaps", "rows",
                "columns"}
_WINRATE_KEYS = {"kind", "title", "caption", "row_header", "decimals", "method", "label", "judge", "opponents"}


def parse_table(data: dict[str, Any], name: str, path: Path) -> TableDefinition:
    """The definition of table `name` from the TOML data of its file `path` (errors name `path`)."""
    where = f"{path}"
    kind = data.get("kind", "metrics")
    if kind not in ("metrics", "winrate"):
        raise ReportError(f"{where}: kind = '{kind}' is not one of 'metrics', 'winrate'")
    allowed = _METRIC_KEYS if kind == "metrics" else _WINRATE_KEYS
    _check_keys(data, allowed, where)
    title = _string(data, "title", where, default=name)
    caption = _string(data, "caption", where, default="")
    decimals = _integer(data, "decimals", where, default=2)
    if kind == "winrate":
        opponents = _axis("opponents", data.get("opponents", {}), f"{where}: [opponents]")
        return WinrateTable(
            name=name,
            path=path,
            title=title,
            caption=caption,
            row_header=_string(data, "row_header", where, default="Comparison"),
            method=_string(data, "method", where, default="TVRL"),
            label=_string(data, "label", where, default="{a} vs {b}"),
            opponents=opponents,
            judge=_string(data, "judge", where, default=None),
            decimals=decimals,
        )
    rows = data.get("rows")
    if not isinstance(rows, dict):
        raise ReportError(f"{where}: a metrics table needs a [rows] section with `by = [params]`")
    _check_keys(rows, {"by", "label", "params", "fixed", "only_run"}, f"{where}: [rows]")
    only_run = rows.get("only_run", False)
    if not isinstance(only_run, bool):
        raise ReportError(f"{where}: [rows] only_run must be true or false")
    by = rows.get("by", [])
    if isinstance(by, str):
        by = [by]
    if not isinstance(by, list) or not all(isinstance(b, str) for b in by):
        raise ReportError(f"{where}: [rows] by must be a list of param names, got {by!r}")
    params = rows.get("params", {})
    if not isinstance(params, dict):
        raise ReportError(f"{where}: [rows.params] must be a table of [rows.params.<param>] sections")
    for p in params:
        if p not in by:
            raise ReportError(f"{where}: [rows.params.{p}] names a param that is not in [rows] by = {by}")
    axes = tuple(_axis(p, params.get(p, {}), f"{where}: [rows.params.{p}]") for p in by)
    fixed = tuple(_fixed_row(i, r, where) for i, r in enumerate(_list_of_tables(rows, "fixed", f"{where}: [rows]")))
    if not by and not fixed:
        raise ReportError(f"{where}: [rows] needs `by = [params]` or at least one [[rows.fixed]] row")
    columns_data = _list_of_tables(data, "columns", where)
    if not columns_data:
        raise ReportError(f"{where}: a metrics table needs at least one [[columns]] entry")
    columns = tuple(_column(i, c, where) for i, c in enumerate(columns_data, start=1))
    label = rows.get("label")
    if label is not None:
        if not isinstance(label, str):
            raise ReportError(f"{where}: [rows] label must be a string such as \"{{reward}} {{method}}\"")
        unknown = [f for f in re.findall(r"{(\w+)}", label) if f not in by]
        if unknown:
            raise ReportError(f"{where}: [rows] label uses {{{unknown[0]}}}, which is not in by = {by}")
    curves = data.get("curves", [])
    if isinstance(curves, str):
        curves = [curves]
    heatmaps = data.get("heatmaps", False)
    if not isinstance(heatmaps, bool):
        raise ReportError(f"{where}: heatmaps must be true or false")
    scale = data.get("scale", 100)
    if not isinstance(scale, (int, float)) or isinstance(scale, bool):
        raise ReportError(f"{where}: scale must be a number (100 shows 0-1 metrics as percentages)")
    return MetricTable(
        name=name,
        path=path,
        title=title,
        caption=caption,
        row_header=_string(data, "row_header", where, default=""),
        rows_by=axes,
        row_label=label,
        fixed_rows=fixed,
        only_run=only_run,
        columns=columns,
        where=_filter(data.get("where", {}), f"{where}: where"),
        scale=float(scale),
        decimals=decimals,
        curves=tuple(str(c) for c in curves),
        heatmaps=heatmaps,
    )


def _check_keys(data: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in data:
        if key not in allowed:
            raise ReportError(
                f"{where}: unknown key '{key}'{registry.suggest(key, allowed)}; "
                f"allowed keys: {', '.join(sorted(allowed))}"
            )


def _string(data: dict[str, Any], key: str, where: str, default: str | None) -> Any:
    value = data.get(key, default)
    if value is not None and not isinstance(value, str):
        raise ReportError(f"{where}: {key} must be a string, got {value!r}")
    return value


def _integer(data: dict[str, Any], key: str, where: str, default: int) -> int:
    value = data.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ReportError(f"{where}: {key} must be a non-negative integer, got {value!r}")
    return value


def _list_of_tables(data: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ReportError(f"{where}: {key} must be written as [[{key}]] sections")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return (str(value),)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        return tuple(str(v) for v in value)
    raise ReportError(f"{where}: expected a value or a list of values, got {value!r}")


def _filter(value: Any, where: str) -> Filter:
    if not isinstance(value, dict):
        raise ReportError(f"{where}: a filter is written {{ param = \"value\" }} or {{ param = [\"a\", \"b\"] }}")
    return {str(k): _strings(v, f"{where}.{k}") for k, v in value.items()}


def _axis(name: str, data: Any, where: str) -> ParamAxis:
    if not isinstance(data, dict):
        raise ReportError(f"{where}: must be a table with values / order / labels")
    _check_keys(data, {"values", "order", "labels"}, where)
    values = _strings(data["values"], f"{where} values") if "values" in data else None
    order = _strings(data.get("order", []), f"{where} order")
    labels = data.get("labels", {})
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise ReportError(f"{where}: labels must map values to strings, e.g. {{ sage = \"SAGE\" }}")
    return ParamAxis(name, values, order, {str(k): v for k, v in labels.items()})


def _fixed_row(i: int, data: dict[str, Any], where: str) -> FixedRow:
    here = f"{where}: [[rows.fixed]] entry {i + 1}"
    _check_keys(data, {"label", "where", "position"}, here)
    if not isinstance(data.get("label"), str):
        raise ReportError(f"{here}: needs a label")
    position = data.get("position", "first")
    if position not in ("first", "last"):
        raise ReportError(f"{here}: position must be 'first' or 'last', got {position!r}")
    return FixedRow(data["label"], _filter(data.get("where", {}), f"{here} where"), position)


def _column(i: int, data: dict[str, Any], where: str) -> (ValueColumn | DeltaColumn | CategoryColumns | HalfGainColumn
                                                          | DecisionColumn):
    here = f"{where}: [[columns]] entry {i}"
    kinds = [k for k in ("metric", "delta", "categories", "steps_to_half_gain", "decision") if k in data]
    if len(kinds) != 1:
        raise ReportError(f"{here}: give exactly one of metric = ..., delta = ..., categories = ..., "
                          "steps_to_half_gain = ..., decision = \"staged\"")
    kind = kinds[0]
    if kind == "decision":
        _check_keys(data, {"label", "decision", "where"}, here)
        if data["decision"] != "staged":
            raise ReportError(f"{here}: decision must be \"staged\" (the study's staged decisions), got "
                              f"{data['decision']!r}")
        return DecisionColumn(_string(data, "label", here, default="Decision"),
                              _filter(data.get("where", {}), f"{here} where"))
    if kind == "steps_to_half_gain":
        _check_keys(data, {"label", "steps_to_half_gain", "where"}, here)
        metric = _string(data, "steps_to_half_gain", here, default=None)
        return HalfGainColumn(_string(data, "label", here, default="Steps to half gain"), metric,
                              _filter(data.get("where", {}), f"{here} where"))
    if kind == "metric":
        _check_keys(data, {"label", "metric", "where"}, here)
        return ValueColumn(
            _string(data, "label", here, default=data["metric"]),
            _string(data, "metric", here, default=None),
            _filter(data.get("where", {}), f"{here} where"),
        )
    if kind == "delta":
        _check_keys(data, {"label", "delta", "where", "baseline", "paired", "optional"}, here)
        for flag in ("paired", "optional"):
            if not isinstance(data.get(flag, False), bool):
                raise ReportError(f"{here}: {flag} must be true or false, got {data[flag]!r}")
        baseline = _filter(data.get("baseline", {}), f"{here} baseline")
        if not baseline:
            raise ReportError(f"{here}: a delta needs baseline = {{ param = \"value\" }} (e.g. method = \"GRPO\")")
        for k, v in baseline.items():
            if len(v) != 1:
                raise ReportError(f"{here}: baseline {k} must be a single value, got {list(v)}")
        return DeltaColumn(
            _string(data, "label", here, default="Δ"),
            _string(data, "delta", here, default=None),
            _filter(data.get("where", {}), f"{here} where"),
            {k: v[0] for k, v in baseline.items()},
            data.get("paired", False),
            data.get("optional", False),
        )
    _check_keys(data, {"categories", "order", "labels", "where", "prefix"}, here)
    include = data["categories"]
    if include != "present":
        include = _strings(include, f"{here} categories")
    labels = data.get("labels", {})
    if not isinstance(labels, dict):
        raise ReportError(f"{here}: labels must map category names to labels")
    return CategoryColumns(
        include,
        _strings(data.get("order", []), f"{here} order"),
        {str(k): str(v) for k, v in labels.items()},
        _filter(data.get("where", {}), f"{here} where"),
        _string(data, "prefix", here, default="eval/"),
    )
