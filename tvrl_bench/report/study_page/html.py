"""The study page as one self-contained HTML file: inline CSS, curves as inline SVG, videos and heatmaps as data
URIs, so it opens from disk (or as an MLflow artifact) with no server and no other file."""

from __future__ import annotations

import html
import time

from tvrl_bench.report.study_page.build import PageData, VideoCell
from tvrl_bench.report.study_page.cells import delta_cell
from tvrl_bench.report.study_page.critic_cards import critic_cards_section
from tvrl_bench.report.study_page.decisions import decisions_section
from tvrl_bench.report.study_page.hacking_html import hacking_section
from tvrl_bench.report.study_page.style import CSS

e = html.escape


def render(data: PageData, files: list[str]) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en">', '<head><meta charset="utf-8">',
           f"<title>Study {e(data.study)}</title>", f"<style>\n{CSS}\n</style></head>", "<body>"]
    out += _header(data)
    out += _tables(data)
    out += decisions_section(data.decisions, data.finished_trials, data.base_rows)
    out += _curves(data)
    out += hacking_section(data)
    out += critic_cards_section(data.critic_cards, data.study_critics)
    out += _videos(data)
    out += _credit(data)
    out += _improvement(data)
    out.append('<section id="files"><h2>Files</h2><p>The page\'s numbers at full precision, beside it: '
               + ", ".join(f'<a href="{e(f)}">{e(f)}</a>' for f in files) + ".</p></section>")
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def _header(data: PageData) -> list[str]:
    methods = ", ".join(f"{m.label} ({len(m.seeds)} seed{'s' if len(m.seeds) != 1 else ''})" for m in data.methods)
    out = [f"<header><h1>Study <code>{e(data.study)}</code></h1>",
           f'<p class="meta">{e(data.runs_note)}. Methods: {e(methods) or "none"}.</p>',
           f'<p class="meta" id="source" data-source="{e(data.source.prefix)}">{e(data.source.note)}</p>',
           '<nav><a href="#tables">Tables</a>' + ('<a href="#decisions">Decisions</a>' if data.decisions else '')
           + '<a href="#curves">Curves</a><a href="#hacking">Reward hacking</a>'
           + ('<a href="#critic-cards">Critic cards</a>' if data.critic_cards else '')
           + '<a href="#videos">Videos</a><a href="#credit">Credit maps</a><a href="#improvement">Probability of '
           'improvement</a></nav>', '<div class="flags" id="flags">']
    if data.flagged:
        out += [f'<p class="hacking-flag">⚠ {e(r.line())}</p>' if r.verdict == "hacking"
                else f'<p class="overstated-flag">△ {e(r.line())}</p>' for r in data.flagged]
    elif any(r.verdict == "none" for r in data.hacking):
        out.append('<p class="no-flag">No method\'s critic gain exceeds its evaluator gain beyond its interval.</p>')
    else:
        out.append('<p class="muted">Reward hacking not assessed: see the panel below for what is missing.</p>')
    out.append("</div></header>")
    return out


def _tables(data: PageData) -> list[str]:
    out = ['<section id="tables"><h2>Tables</h2>']
    if not data.tables:
        out.append('<p class="muted">No table was made for this study.</p>')
    for t in data.tables:
        fragment = t.fragment.replace("<h2>", "<h3>").replace("</h2>", "</h3>")
        title, _, rest = fragment.partition("</h3>")
        out.append(f'<div class="study-table" id="table-{e(t.name)}">')
        answer = e(t.answer)
        for lead in ("Separated (95% CI excludes 0):", "Not separated:"):
            answer = answer.replace(lead, f"<b>{lead}</b>")
        out.append(f'{title}</h3><p class="answer">{answer}</p>{rest}' if rest else fragment)
        out.append("</div>")
    out.append("</section>")
    return out


def _legend(data: PageData) -> str:
    return '<p class="legend">' + "".join(
        f'<span><i style="background:{data.colours[m.label]}"></i>{e(m.label)}</span>' for m in data.methods) + "</p>"


def _curves(data: PageData) -> list[str]:
    out = ['<section id="curves"><h2>Curves</h2>',
           '<p class="meta">Evaluations during training (the first eval prompts, fixed noise), per method: mean over '
           'seeds, band ± one std; a method evaluated once (the base model) is a dashed level.</p>']
    if data.curves:
        out.append(_legend(data))
        out.append('<div class="curves">' + "".join(svg for _, svg in data.curves) + "</div>")
    out += [f'<p class="muted">{e(n)}</p>' for n in data.curve_notes]
    out.append("</section>")
    return out


def _verdicts(cell: VideoCell) -> str:
    record = cell.record
    if record is None:
        return f'<p class="muted">{e(cell.missing or "no evaluator record")}</p>'
    parts = []
    score = record.get("score")
    if isinstance(score, (int, float)):
        parts.append(f"<p>score {100 * score:.1f}</p>")
    checks = record.get("checks")
    if isinstance(checks, list) and checks:
        items = []
        for c in checks:
            if not isinstance(c, dict):
                continue
            passed = c.get("passed")
            mark = '<span class="pass">✓</span>' if passed else '<span class="fail">✗</span>'
            items.append(f"<li>{mark} {e(str(c.get('check', '')))}</li>")
        parts.append('<ul class="verdicts">' + "".join(items) + "</ul>")
    elif not parts:
        parts.append('<p class="muted">no per-check verdicts in the record</p>')
    return "".join(parts)


def _videos(data: PageData) -> list[str]:
    out = ['<section id="videos"><h2>Videos side by side</h2>']
    if data.video_seed is not None:
        out.append(f'<p class="meta">The final sample of each method for the first eval prompts, seed '
                   f'{e(data.video_seed)} (the same prompt and the same noise for every method), with the evaluator\'s '
                   "verdict per check under each.</p>")
    for row in data.videos:
        out.append(f'<div class="prompt" data-index="{row.index}"><p class="prompt-text">{e(row.prompt)}</p>'
                   '<div class="videos">')
        for cell in row.cells:
            out.append(f'<figure class="sample" data-method="{e(cell.method)}">')
            if cell.video:
                out.append(f'<video src="data:video/mp4;base64,{cell.video}" autoplay loop muted playsinline '
                           f'title="{e(cell.method)}"></video>')
            else:
                out.append(f'<p class="muted">{e(cell.missing or "no video")}</p>')
            out.append(f"<figcaption><b>{e(cell.method)}</b>{_verdicts(cell)}</figcaption></figure>")
        out.append("</div></div>")
    out += [f'<p class="muted">{e(n)}</p>' for n in data.video_notes]
    out.append("</section>")
    return out


def _credit(data: PageData) -> list[str]:
    out = ['<section id="credit"><h2>Credit maps</h2>',
           '<p class="meta">Each method\'s first logged credit heatmap (training step 1: the first rollout of the '
           'first step, before any update, so with one seed, sampler and policy every router maps the same video): '
           'the frames on top, the credit its router gave each token below.</p>', '<div class="maps">']
    for h in data.heatmaps:
        router = f", router {h.credit}" if h.credit else ""
        out.append(f'<figure class="credit-map" data-method="{e(h.method)}"><img alt="credit map of {e(h.method)}" '
                   f'src="data:image/png;base64,{h.png}"><figcaption><b>{e(h.method)}</b>{e(router)}, step {h.step}, '
                   f'seed {e(data.video_seed or "")}</figcaption></figure>')
    out.append("</div>")
    out += [f'<p class="muted">{e(n)}</p>' for n in data.heatmap_notes]
    out.append("</section>")
    return out


def _improvement(data: PageData) -> list[str]:
    c = data.comparisons
    out = ['<section id="improvement"><h2>Probability of improvement</h2>']
    if c is None or not c.pairs:
        out.append('<p class="muted">Fewer than two methods: nothing to compare.</p></section>')
        return out
    out.append(f'<p class="meta">P(A &gt; B): the probability that A scores higher than B ({e(data.source.overall)}, '
               f'ties half; rliable\'s definition), {e(c.unit)}; 95% bootstrap interval over seeds and prompts '
               '(2,000 replicates, each redrawing whole seeds, A\'s and B\'s apart, and the prompts: a seed is one '
               'trained policy scored on every prompt, so its prompts are not independent draws, and rliable\'s '
               'stratified bootstrap, which redraws each prompt\'s seeds apart, would give intervals too narrow). '
               'Beside it the paired Δ A − B of the final score over the seeds both have, as the tables compute it. '
               '† marks an interval that includes 0.5 (or 0).</p>')
    if any(p.improvement is not None and 1 in p.improvement.runs for p in c.pairs):
        out.append('<p class="meta" id="one-seed">Where a method has one seed, its interval is over the prompts '
                   'only: it says how sure the difference is for that training run, not across seeds.</p>')
    out.append('<table id="improvement-table"><thead><tr><th>A</th><th>B</th><th>P(A &gt; B)</th><th>Δ A − B (paired)</th>'
               "<th>seeds A, B</th><th>tasks</th></tr></thead><tbody>")
    for p in c.pairs:
        est = p.improvement
        if est is None:
            text, cls, runs, tasks = "—", "", "", ""
        else:
            mark = "" if est.excludes_value(0.5) else "†"
            text = f"{est.value:.3f} [{est.low:.3f}, {est.high:.3f}]{mark}"
            cls = "" if est.excludes_value(0.5) else ' class="ns"'
            runs, tasks = ", ".join(str(r) for r in est.runs), str(est.tasks)
        out.append(f"<tr><td>{e(p.a)}</td><td>{e(p.b)}</td><td{cls}>{e(text)}</td>{delta_cell(p.delta)}"
                   f"<td>{runs}</td><td>{tasks}</td></tr>")
    out.append("</tbody></table>")
    out.append('<h3>Interquartile mean</h3><table id="iqm-table"><thead><tr><th>Method</th><th>IQM (×100)</th>'
               "<th>seeds</th><th>tasks</th></tr></thead><tbody>")
    for q in c.iqms:
        if q.estimate is None:
            out.append(f'<tr><td>{e(q.method)}</td><td class="muted">{e(q.missing or "")}</td><td></td><td></td></tr>')
        else:
            est = q.estimate
            out.append(f"<tr><td>{e(q.method)}</td><td>{est.value:.2f} [{est.low:.2f}, {est.high:.2f}]</td>"
                       f"<td>{est.runs[0]}</td><td>{est.tasks}</td></tr>")
    out.append("</tbody></table>")
    out.append(f'<p class="notes">Written by tvrl-report at {e(time.strftime("%Y-%m-%d %H:%M:%S %Z"))}.</p></section>')
    return out
