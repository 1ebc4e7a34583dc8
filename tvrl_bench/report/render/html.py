"""Rendering a TableResult as a standalone HTML page (the table, its notes, its plots)."""

from __future__ import annotations

import html

from tvrl_bench.report.render.cells import group_starts, table_body, table_header
from tvrl_bench.report.stats.intervals import DeltaStat
from tvrl_bench.report.tables.table_result import Cell, Interval, Missing, TableResult


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
    header = table_header(result)
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
    for row, start, texts in zip(result.rows, group_starts(result), table_body(result)):
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
