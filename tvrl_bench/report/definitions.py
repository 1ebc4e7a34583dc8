"""Table definitions: small TOML files in `reports/tables/<name>.toml` that say what a table shows.

A metrics table (the default kind) has
- `title`, `caption`, `row_header`, `scale` (default 100), `decimals` (default 2), `where` (a filter on params
  every run of the table must pass), `curves` (metrics plotted per cell over training), `heatmaps` (true to
  collect the latest credit heatmap of each cell);
- `[rows]`: `by` (params whose values make the rows, outermost first), `label` (a format such as
  "{reward} {method}" over the value labels), `[rows.params.<param>]` with `values` (exactly these rows, in this
  order, shown even when missing), `order` (preferred order; other values present follow, naturally sorted) and
  `labels` ({value: label}); `[[rows.fixed]]` rows with a `label`, a `where` filter and `position`
  ("first" or "last");
- `[[columns]]`, in display order, each one of
  * a value column: `label`, `metric` (an MLflow metric name), optional `where` (a param filter);
  * a delta column: `label`, `delta` (metric), optional `where` (which cells are treated) and `baseline`
    (params that change to get the baseline cell): treated minus baseline, a difference of means; with
    `paired = true` the two cells are compared seed by seed (same seeds, prompts and eval noise): the mean of
    the per-seed differences over the seeds both cells have, with a paired t-interval;
  * category columns: `categories = "present"` (one column per `eval/<category>` metric the runs have, except
    `eval/overall` and `eval/dim/*`) or a list of category names (always shown), with `order` and `labels`.

A win-rate table (`kind = "winrate"`) has `method` (rows are "<method> vs X"), `label` ("{a} vs {b}"), optional
`judge` (a glob on judge names, e.g. "human:*") and `[opponents]` with `values` / `order` / `labels`.

A filter maps a param to a value or a list of accepted values; values are compared as strings (MLflow params).
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from tvrl_bench import config, registry
from tvrl_bench.report.runs import ReportError

Filter = dict[str, tuple[str, ...]]

TABLES_SUBDIR = Path("reports") / "tables"


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


# eval/<name> metrics that are not evaluator categories: the overall score, and the critic's own score of the videos
NOT_CATEGORIES = ("overall", "critic_reward")


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
    """A table of evaluation metrics over cells of runs (see the module docstring for the TOML keys)."""

    name: str
    path: Path
    title: str
    caption: str
    row_header: str
    rows_by: tuple[ParamAxis, ...]
    row_label: str | None
    fixed_rows: tuple[FixedRow, ...]
    columns: tuple[ValueColumn | DeltaColumn | CategoryColumns, ...]
    where: Filter = field(default_factory=dict)
    scale: float = 100.0
    decimals: int = 2
    curves: tuple[str, ...] = ()
    heatmaps: bool = False
    kind: str = "metrics"

    def required_params(self) -> list[str]:
        names = [a.name for a in self.rows_by] + list(self.where)
        for row in self.fixed_rows:
            names += list(row.where)
        for col in self.columns:
            names += list(col.where)
            if isinstance(col, DeltaColumn):
                names += list(col.baseline)
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


# ---- locating definitions --------------------------------------------------------------------------------------


def table_dirs(extra: list[str | Path] | None = None) -> list[Path]:
    """Folders searched for `<name>.toml`, first match wins: the extra ones, then `reports/tables/` under the
    current folder, every folder of $TVRL_BENCH_PATH and the checkout (where the four paper tables ship)."""
    dirs = [Path(d) for d in extra or []] + [p / TABLES_SUBDIR for p in config.search_paths()]
    seen: list[Path] = []
    for d in dirs:
        resolved = d.resolve()
        if resolved not in seen:
            seen.append(resolved)
    return seen


def available_tables(extra_dirs: list[str | Path] | None = None) -> dict[str, Path]:
    """{table name: definition file} over `table_dirs`, in name order."""
    found: dict[str, Path] = {}
    for d in table_dirs(extra_dirs):
        if d.is_dir():
            for path in sorted(d.glob("*.toml")):
                found.setdefault(path.stem, path)
    return dict(sorted(found.items()))


def load_table(name: str, extra_dirs: list[str | Path] | None = None) -> TableDefinition:
    """The definition of table `name` (a name found by `available_tables`, or a path to a .toml file)."""
    if name.endswith(".toml") and Path(name).is_file():
        return parse_table_file(Path(name))
    tables = available_tables(extra_dirs)
    if name not in tables:
        searched = ", ".join(str(d) for d in table_dirs(extra_dirs))
        raise ReportError(
            f"no table definition named '{name}'{registry.suggest(name, tables)}; tables found: "
            f"{', '.join(tables) or 'none'} (searched {searched}). Add reports/tables/{name}.toml to define it."
        )
    return parse_table_file(tables[name])


# ---- parsing ---------------------------------------------------------------------------------------------------

_METRIC_KEYS = {"kind", "title", "caption", "row_header", "where", "scale", "decimals", "curves", "heatmaps", "rows",
                "columns"}
_WINRATE_KEYS = {"kind", "title", "caption", "row_header", "decimals", "method", "label", "judge", "opponents"}


def parse_table_file(path: Path) -> TableDefinition:
    """Parse and validate one definition; every error names the file and the offending key."""
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ReportError(f"{path}: TOML syntax error: {exc}") from None
    return parse_table(data, name=path.stem, path=path)


def parse_table(data: dict[str, Any], name: str, path: Path) -> TableDefinition:
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
    _check_keys(rows, {"by", "label", "params", "fixed"}, f"{where}: [rows]")
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


def _column(i: int, data: dict[str, Any], where: str) -> ValueColumn | DeltaColumn | CategoryColumns:
    here = f"{where}: [[columns]] entry {i}"
    kinds = [k for k in ("metric", "delta", "categories") if k in data]
    if len(kinds) != 1:
        raise ReportError(f"{here}: give exactly one of metric = ..., delta = ..., categories = ...")
    kind = kinds[0]
    if kind == "metric":
        _check_keys(data, {"label", "metric", "where"}, here)
        return ValueColumn(
            _string(data, "label", here, default=data["metric"]),
            _string(data, "metric", here, default=None),
            _filter(data.get("where", {}), f"{here} where"),
        )
    if kind == "delta":
        _check_keys(data, {"label", "delta", "where", "baseline", "paired"}, here)
        if not isinstance(data.get("paired", False), bool):
            raise ReportError(f"{here}: paired must be true or false, got {data['paired']!r}")
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
