"""Rendering a TableResult as Markdown, LaTeX (booktabs), HTML and CSV (HTML in html.py, CSV in csv.py,
the cell texts in cells.py).

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

import re
from pathlib import Path

from tvrl_bench.report.render.cells import DASH, MARK, cell_text, group_starts, table_body, table_header
from tvrl_bench.report.render.csv import csv_columns, csv_frame, to_csv
from tvrl_bench.report.render.html import to_html
from tvrl_bench.report.tables.table_result import TableResult

__all__ = ["FORMATS", "cell_text", "check_formats", "csv_columns", "csv_frame", "tex_escape", "to_csv", "to_html",
           "to_latex", "to_markdown", "write_table"]

FORMATS = ("md", "tex", "csv", "html")


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


# ---- Markdown ----------------------------------------------------------------------------------------------------


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(result: TableResult) -> str:
    header = table_header(result)
    lines = [f"### {result.title}", ""]
    if result.caption:
        lines += [result.caption, ""]
    lines.append("| " + " | ".join(_md_escape(h) for h in header) + " |")
    lines.append("|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|")
    for texts in table_body(result):
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
    header = table_header(result)
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
    for start, texts in zip(group_starts(result), table_body(result)):
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


RENDERERS = {"md": to_markdown, "tex": to_latex, "csv": to_csv}


def write_table(
    result: TableResult, folder: Path, formats: tuple[str, ...] = FORMATS, images: list[str] | tuple[str, ...] = ()
) -> list[Path]:
    """Write `<folder>/<table>.<fmt>` for every format, all or none (report/files.py); returns the paths written."""
    from tvrl_bench.report.files import write_together

    texts = {f"{result.name}.{fmt}": to_html(result, images) if fmt == "html" else RENDERERS[fmt](result)
             for fmt in check_formats(formats)}
    return write_together(folder, texts)
