"""The study page's decisions panel: a staged study's comparisons, which stopped at which stage, and the trials it
ran against a grid of its most stages (report/runs/decisions.py recomputes them from the runs)."""

from __future__ import annotations

import html

from tvrl_bench.report.runs.decisions import StudyDecisions

e = html.escape


def trials_saved(decisions: StudyDecisions, finished_trials: int, base_rows: bool) -> tuple[int, int]:
    """(trials run, trials of a grid of the most stages: every arm and base row on every stage's seeds)."""
    arms = len(decisions.arms.arms) + (1 if base_rows else 0)
    return finished_trials, arms * len(decisions.design.seeds)


def decisions_section(decisions: StudyDecisions | None, finished_trials: int, base_rows: bool) -> list[str]:
    """The panel's HTML lines ([] for a study without staged decisions)."""
    if decisions is None:
        return []
    d = decisions.design
    within = f"; within ±{d.margin:g}: no difference of {d.margin:g} points or more" if d.margin > 0 else ""
    out = ['<section id="decisions"><h2>Staged decisions</h2>',
           f'<p class="meta">Each arm against its baseline on {e(d.metric)} ×100, decided by a group-sequential '
           f'permutation test with family-wise error {d.alpha:g} over all comparisons and stages: stages of '
           f'{d.seeds_per_stage} seeds, at most {d.max_stages}; larger / smaller{e(within)}; open: not decided yet; '
           'undecided: the stages ran out. T is the difference of means (the mean of the stages\' differences), '
           'the boundary the half-width it had to exceed (docs/sweeps.md, staged decisions).</p>']
    if not decisions.results:
        out.append('<p class="muted">Pending: the first stage has not finished for every comparison.</p></section>')
        return out
    out.append('<table id="decisions-table"><thead><tr><th>Arm</th><th>Baseline</th><th>Decision</th><th>Stage</th>'
               '<th>T</th><th>Boundary</th><th>Seeds (arm, baseline)</th></tr></thead><tbody>')
    for v in decisions.results[-1].verdicts:
        word = f"within ±{d.margin:g}" if v.verdict == "within" else v.verdict
        out.append(f'<tr data-verdict="{e(v.verdict)}"><td>{e(v.comparison.arm)}</td><td>{e(v.comparison.baseline)}'
                   f'</td><td>{e(word)}</td><td>{v.stage}</td><td>{v.difference:+.2f}</td><td>{v.boundary:.2f}</td>'
                   f'<td>{v.n_arm}, {v.n_baseline}</td></tr>')
    out.append("</tbody></table>")
    if decisions.arms.controls:
        out.append(f'<p class="meta">Controls (no baseline arm in the study; first stage only): '
                   f'{e(", ".join(decisions.arms.controls))}.</p>')
    run, most = trials_saved(decisions, finished_trials, base_rows)
    out.append(f'<p id="trials-saved">Trials: {run} run of at most {most} (a grid of {d.max_stages} stages): '
               f'{most - run} saved.</p></section>')
    return out
