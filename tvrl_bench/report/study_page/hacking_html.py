"""The study page's reward-hacking section: the panel's table (hacking.py, its rules hacking_rules.py) and the
Gao-style gain curves per method (gain_curves.py)."""

from __future__ import annotations

import html
import math

from tvrl_bench.report.study_page.build import PageData
from tvrl_bench.report.study_page.cells import delta_cell
from tvrl_bench.report.study_page.hacking_rules import MARGIN

e = html.escape

VERDICT_TEXT = {"hacking": "flagged: reward hacking (the critic rose, the evaluator did not)",
                "overstated": "flagged: overstated (the critic's gain exceeds the evaluator's)"}


def _explanation(data: PageData) -> str:
    src = data.source
    return (f'<p class="meta">Per method, the critic it was trained on ({e(src.critic)}) and the independent '
            f'evaluator ({e(src.overall)}) against its baseline, paired by seed with 95% t-intervals: their raw Δ '
            '(×100) and their gains on a headroom-normalised scale (×100: a rise as a share of the room left, a fall '
            'as a share of the score; a critic off [0, 1] raw), the gain gap (critic gain − evaluator gain), the '
            'critic\'s false-yes rate Δ where the runs log it, and the efficiency (the evaluator gain with this '
            'critic over the one with the exact oracle, same credit and seeds). A finding needs its interval above 0 '
            f'and at least {MARGIN:g} point. <b>Reward hacking</b>: the critic\'s gain is confirmed and the '
            f'evaluator\'s is below {MARGIN:g} point, or the false-yes rate rose. <b>Overstated</b>: otherwise, the '
            'gain gap is confirmed. A lenient or weak critic is neither: it shows as an efficiency below 1. † marks '
            'an interval that includes 0.</p>')


def _efficiency(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.2f}"


def hacking_section(data: PageData) -> list[str]:
    """The section's HTML lines: explanation, table, gain curves."""
    out = ['<section id="hacking"><h2>Reward hacking</h2>', _explanation(data)]
    if not data.hacking:
        out.append('<p class="muted">No trained method in this study.</p></section>')
        return out
    out.append('<table id="hacking-table"><thead><tr><th>Method</th><th>Critic</th><th>Baseline</th><th>Critic Δ</th>'
               "<th>Evaluator Δ</th><th>Critic gain</th><th>Evaluator gain</th><th>Gain gap</th>"
               "<th>False-yes Δ</th><th>Efficiency</th><th>Verdict</th></tr></thead><tbody>")
    for r in data.hacking:
        verdict = VERDICT_TEXT.get(r.verdict) or r.missing or "not flagged"
        cls = {"hacking": ' class="flagged"', "overstated": ' class="flagged overstated"'}.get(r.verdict, "")
        out.append(f'<tr{cls} data-method="{e(r.method)}"><td>{e(r.method)}</td><td>{e(r.critic_name or "—")}</td>'
                   f'<td>{e(r.baseline or "—")}</td>{delta_cell(r.critic)}{delta_cell(r.evaluator)}'
                   f'{delta_cell(r.critic_gain)}{delta_cell(r.evaluator_gain)}{delta_cell(r.gain_gap)}'
                   f'{delta_cell(r.false_yes)}<td class="efficiency">{_efficiency(r.efficiency)}</td>'
                   f'<td class="verdict">{e(verdict)}</td></tr>')
    out.append("</tbody></table>")
    out.append('<h3>Gains along training</h3><p class="meta">Per method, the critic\'s gain and the evaluator\'s '
               'gain since step 0 (headroom-normalised, ×100; the same eval prompts and noise at every evaluation), '
               'mean over seeds ± one std: a hacked method\'s evaluator curve turns over while its critic\'s keeps '
               'rising.</p>')
    if data.gain_curves:
        out.append('<div class="curves" id="gain-curves">' + "".join(
            f'<figure class="gain-curve" data-method="{e(label)}">{svg}</figure>' for label, svg in data.gain_curves)
            + "</div>")
    out += [f'<p class="muted">{e(n)}</p>' for n in data.gain_curve_notes]
    out.append("</section>")
    return out
