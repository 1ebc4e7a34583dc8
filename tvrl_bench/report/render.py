"""Rendering a TableResult as Markdown, LaTeX (booktabs), HTML and CSV.

Cell texts (2 decimals by default):
  value     "45.12 ± 1.03"  mean ± std over seeds ("45.12" alone with one seed)
  delta     "+1.23 [-0.40, +2.86]†"  difference of means [95% CI], † when the CI includes 0 or is undefined
  interval  "[48.10, 75.00]†"  † when it includes the null value (50 for a win rate)
  missing   "—" (the reason is in the notes and the warnings); not applicable: empty.
The CSV holds the same numbers at full precision, one row per table row: the row header, then for a value column
`<label>`, `<label> n`, `<label> std`; for a delta column `<label>`, `<label> ci_low`, `<label> ci_high`;
for an interval column `<label> low`, `<label> high`; number and count columns as `<label>`.
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import pandas as pd

from tvrl_bench.report.stats import DeltaStat, ValueStat
from tvrl_bench.report.table_result import Blank, Cell, Column, Count, Interval, Missing, Number, TableResult

FORMATS = ("md", "tex", "csv", "html")
MARK = "†"
DASH = "—"


def check_formats(formats: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Normalise "md,tex" or ["md", "tex"]; an unknown format is a ValueError naming the allowed ones."""
    if isinstance(formats, str):
        formats = [f for f in formats.split(",")]
    out = tuple(f.strip().lower().lstrip(".") for f in formats if f.strip())
    for f in out:
        if f not in FORMATS:
            raise ValueError(f"unknown report format '{f}'; choose from {', '.join(FORMATS)} (comma-separated)")
    if not out:
        raise ValueError(f"no report format given; choose from {', '.join(FORMATS)}")
    return tuple(dict.fromkeys(out))


# ---- cell text ---------------------------------------------------------------------------------------------------


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
    if isinstance(cell, Interval):
        if math.isnan(cell.low):
            return f"n/a{MARK}"
        mark = "" if cell.excludes_null else MARK
        return f"[{cell.low:.{d}f}, {cell.high:.{d}f}]{mark}"
    raise TypeError(f"cannot render cell {cell!r}")


def _header(result: TableResult) -> list[str]:
    labels = [result.row_header] + [c.label for c in result.columns]
    return labels + (["n"] if result.n_column else [])


def _body(result: TableResult) -> list[list[str]]:
    body = []
    for row in result.rows:
        texts = [row.label] + [cell_text(c, result.decimals) for c in row.cells]
        body.append(texts + ([row.n_label()] if result.n_column else []))
    return body


def _group_starts(result: TableResult) -> list[bool]:
    starts = []
    for i, row in enumerate(result.rows):
        starts.append(i > 0 and row.group != result.rows[i - 1].group)
    return starts


# ---- Markdown ----------------------------------------------------------------------------------------------------


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(result: TableResult) -> str:
    header = _header(result)
    lines = [f"### {result.title}", ""]
    if result.caption:
        lines += [result.caption, ""]
    lines.append("| " + " | ".join(_md_escape(h) for h in header) + " |")
    lines.append("|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|")
    for texts in _body(result):
        lines.append("| " + " | ".join(_md_escape(t) for t in texts) + " |")
    lines.append("")
    lines += [f"- {_md_escape(n)}" for n in result.notes]
    lines.append(f"- Study `{result.study}`, table `{result.name}`: regenerated from MLflow by tvrl-report.")
    return "\n".join(lines) + "\n"


# ---- LaTeX (booktabs) --------------------------------------------------------------------------------------------

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
    "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
_TEX_UNICODE = {
    "±": r"$\pm$", MARK: r"$^\dagger$", DASH: "---", "–": "--", "Δ": r"$\Delta$", "×": r"$\times$", "−": r"$-$",
    "≤": r"$\leq$", "≥": r"$\geq$",
}


def tex_escape(text: str) -> str:
    """Escape LaTeX specials and translate the Unicode symbols tables use."""
    out = "".join(_TEX_SPECIAL.get(ch, ch) for ch in text)
    return "".join(_TEX_UNICODE.get(ch, ch) for ch in out)


def to_latex(result: TableResult) -> str:
    header = _header(result)
    label = re.sub(r"[^A-Za-z0-9:-]+", "-", f"tab:{result.study}-{result.name}")
    title = tex_escape(result.title) + (". " + tex_escape(result.caption) if result.caption else "")
    lines = [
        f"% tvrl-report: table '{result.name}' of study '{result.study}', regenerated from MLflow (do not edit).",
        "% Needs \\usepackage{booktabs}.",
        "\\begin{table}[t]",
        "\\centering",
        f"\\caption{{{title}}}",
        f"\\label{{{label}}}",
        "\\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        "\\toprule",
        " & ".join(tex_escape(h) if h != "n" else "$n$" for h in header) + " \\\\",
        "\\midrule",
    ]
    for start, texts in zip(_group_starts(result), _body(result)):
        if start:
            lines.append("\\midrule")
        lines.append(" & ".join(tex_escape(t) for t in texts) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    if result.notes:
        lines += ["", "\\smallskip", "{\\footnotesize"]
        last = len(result.notes) - 1
        lines += [tex_escape(n) + ("\\\\" if i < last else "\\par}") for i, n in enumerate(result.notes)]
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


# ---- HTML --------------------------------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 0.3em 0.8em; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { border-top: 2px solid #222; border-bottom: 1px solid #222; }
tbody tr:last-child td { border-bottom: 2px solid #222; }
tr.group-start td { border-top: 1px solid #999; }
td.missing { color: #b00; }
td.ns { color: #777; }
.notes { font-size: 0.9em; color: #444; }
img { max-width: 100%; }
""".strip()


def _cell_class(cell: Cell) -> str:
    if isinstance(cell, Missing):
        return ' class="missing"'
    if isinstance(cell, DeltaStat) and not cell.excludes_zero:
        return ' class="ns"'
    if isinstance(cell, Interval) and not cell.excludes_null:
        return ' class="ns"'
    return ""


def to_html(result: TableResult, images: list[str] | tuple[str, ...] = ()) -> str:
    """A standalone page: the table, its notes, and the given images (paths relative to the page)."""
    e = html.escape
    header = _header(result)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        f"<title>{e(result.title)} ({e(result.study)})</title>",
        f"<style>\n{_CSS}\n</style></head>",
        "<body>",
        f"<h2>{e(result.title)}</h2>",
    ]
    if result.caption:
        out.append(f'<p class="caption">{e(result.caption)}</p>')
    out.append(f'<table id="{e(result.name)}">')
    out.append("<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead>")
    out.append("<tbody>")
    for row, start, texts in zip(result.rows, _group_starts(result), _body(result)):
        classes = [""] + [_cell_class(c) for c in row.cells] + ([""] if result.n_column else [])
        cells = "".join(f"<td{cls}>{e(t)}</td>" for cls, t in zip(classes, texts))
        row_class = ' class="group-start"' if start else ""
        out.append(f"<tr{row_class}>{cells}</tr>")
    out.append("</tbody></table>")
    out.append('<ul class="notes">')
    out += [f"<li>{e(n)}</li>" for n in result.notes]
    out.append(f"<li>Study <code>{e(result.study)}</code>, table <code>{e(result.name)}</code>: "
               "regenerated from MLflow by tvrl-report.</li>")
    out.append("</ul>")
    for image in images:
        out.append(f'<figure><img src="{e(image)}" alt="{e(image)}"><figcaption>{e(image)}</figcaption></figure>')
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


# ---- CSV ---------------------------------------------------------------------------------------------------------


def csv_columns(column: Column) -> list[str]:
    """The CSV columns one table column becomes (see the module docstring)."""
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
        return [None if column.kind == "count" else nan] * width
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


RENDERERS = {"md": to_markdown, "tex": to_latex, "csv": to_csv}


def write_table(
    result: TableResult, folder: Path, formats: tuple[str, ...] = FORMATS, images: list[str] | tuple[str, ...] = ()
) -> list[Path]:
    """Write `<folder>/<table>.<fmt>` for every format; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in check_formats(formats):
        text = to_html(result, images) if fmt == "html" else RENDERERS[fmt](result)
        path = folder / f"{result.name}.{fmt}"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths
