"""Finding and loading table definitions: TOML files in `reports/tables/<name>.toml` that say what a table shows.

A metrics table (the default kind) has
- `title`, `caption`, `row_header`, `scale` (default 100), `decimals` (default 2), `where` (a filter on params
  every run of the table must pass), `curves` (metrics plotted per cell over training), `heatmaps` (true to
  collect the latest credit heatmap of each cell);
- `[rows]`: `by` (params whose values make the rows, outermost first), `only_run` (true: rows only for the
  combinations of `by` values some run has, e.g. a null control run with one credit only; default false, every
  combination), `label` (a format such as "{reward} {method}" over the value labels), `[rows.params.<param>]` with `values` (exactly these rows, in this
  order, shown even when missing), `order` (preferred order; other values present follow, naturally sorted) and
  `labels` ({value: label}); `[[rows.fixed]]` rows with a `label`, a `where` filter and `position`
  ("first" or "last");
- `[[columns]]`, in display order, each one of
  * a value column: `label`, `metric` (an MLflow metric name), optional `where` (a param filter);
  * a delta column: `label`, `delta` (metric), optional `where` (which cells are treated) and `baseline`
    (params that change to get the baseline cell): treated minus baseline, a difference of means; with
    `paired = true` the two cells are compared seed by seed (same seeds, prompts and eval noise): the mean of
    the per-seed differences over the seeds both cells have, with a paired t-interval;
    a baseline value "*" leaves that param unfiltered (any value), and a baseline that selects a fixed row's runs
    compares with them;
  * a steps-to-half-gain column: `label`, `steps_to_half_gain` (metric), optional `where`: per run, the first
    logged step at which the metric's gain over its first value reaches half its final gain (half_gain.py);
  * category columns: `categories = "present"` (one column per `eval/<category>` metric the runs have, except
    `eval/overall` and `eval/dim/*`) or a list of category names (always shown), with `order` and `labels`.

A win-rate table (`kind = "winrate"`) has `method` (rows are "<method> vs X"), `label` ("{a} vs {b}"), optional
`judge` (a glob on judge names, e.g. "human:*") and `[opponents]` with `values` / `order` / `labels`.

A filter maps a param to a value or a list of accepted values; values are compared as strings (MLflow params).

The types of a parsed definition are in definition_types.py, the checks of the keys in definition_parser.py.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from tvrl_bench import config, registry
from tvrl_bench.report.errors import ReportError
from tvrl_bench.report.tables.definition_parser import parse_table
from tvrl_bench.report.tables.definition_types import TableDefinition

TABLES_SUBDIR = Path("reports") / "tables"


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


def parse_table_file(path: Path) -> TableDefinition:
    """Parse and validate one definition; every error names the file and the offending key."""
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ReportError(f"{path}: TOML syntax error: {exc}") from None
    return parse_table(data, name=path.stem, path=path)
