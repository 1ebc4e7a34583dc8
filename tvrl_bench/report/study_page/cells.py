"""Table cells of the study page shared by its panels: a paired delta with its interval."""

from __future__ import annotations

import html
import math

from tvrl_bench.report.stats.intervals import DeltaStat

e = html.escape


def delta_text(d: DeltaStat | None) -> str:
    """'+1.23 [+0.10, +2.36]', with † where the interval includes 0; '—' without a value."""
    if d is None or math.isnan(d.delta):
        return "—"
    if math.isnan(d.ci_low):
        return f"{d.delta:+.2f} [n/a]†"
    return f"{d.delta:+.2f} [{d.ci_low:+.2f}, {d.ci_high:+.2f}]" + ("" if d.excludes_zero else "†")


def delta_cell(d: DeltaStat | None) -> str:
    """A <td> of `delta_text`, class ns where the interval includes 0."""
    cls = ' class="ns"' if d is not None and not math.isnan(d.delta) and not d.excludes_zero else ""
    return f"<td{cls}>{e(delta_text(d))}</td>"
