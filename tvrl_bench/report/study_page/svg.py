"""Curves as inline SVG (no image files, no matplotlib: the page stays one file and is written in milliseconds).

A curve is one method's mean over seeds per step with a band of ± one std; a method evaluated once (the base
model, 0 steps) is a dashed level across the plot. A plot whose curves the page's legend does not name (the gain
curves: the critic's and the evaluator's of one method) draws its own legend under the axis, one row.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")


LEGEND_HEIGHT = 16


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


@dataclass
class Curve:
    label: str
    colour: str
    steps: np.ndarray
    mean: np.ndarray
    std: np.ndarray  # NaN where one seed
    seeds: int


def _legend(curves: list[Curve], x: float, y: float) -> str:
    """One row at baseline `y` from `x`: per curve a short line in its colour and its label."""
    out = ['<g class="legend">']
    for c in curves:
        out.append(f'<line x1="{x:.1f}" x2="{x + 14:.1f}" y1="{y - 3:.1f}" y2="{y - 3:.1f}" stroke="{c.colour}" '
                   f'stroke-width="2.5"/><text x="{x + 18:.1f}" y="{y:.1f}" font-size="10">{html.escape(c.label)}</text>')
        x += 18 + 5.6 * len(c.label) + 16  # about a 10 px font's width per character, then a gap
    out.append("</g>")
    return "".join(out)


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if not math.isfinite(low) or not math.isfinite(high) or high <= low:
        return [low] if math.isfinite(low) else []
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step + 1e-9) + 1)]


def curves_svg(curves: list[Curve], title: str, width: int = 460, height: int = 270, legend: bool = False) -> str:
    """One plot: every curve's mean line and std band, axes with ticks, the title on top; with `legend`, a row under
    the axis naming each curve in its colour (<g class="legend">, the plot LEGEND_HEIGHT px taller)."""
    left, right, top, bottom = 48, 12, 24, 34 + (LEGEND_HEIGHT if legend else 0)
    height += LEGEND_HEIGHT if legend else 0
    pw, ph = width - left - right, height - top - bottom
    steps = np.concatenate([c.steps for c in curves]) if curves else np.zeros(0)
    lows = [c.mean - np.nan_to_num(c.std) for c in curves]
    highs = [c.mean + np.nan_to_num(c.std) for c in curves]
    ys = np.concatenate(lows + highs) if curves else np.zeros(0)
    ys = ys[np.isfinite(ys)]
    x0, x1 = (float(steps.min()), float(steps.max())) if steps.size else (0.0, 1.0)
    if x1 <= x0:
        x1 = x0 + 1.0
    y0, y1 = (float(ys.min()), float(ys.max())) if ys.size else (0.0, 1.0)
    pad = (y1 - y0) * 0.08 or 1.0
    y0, y1 = y0 - pad, y1 + pad

    def sx(v: float) -> float:
        return left + (v - x0) / (x1 - x0) * pw

    def sy(v: float) -> float:
        return top + (1 - (v - y0) / (y1 - y0)) * ph

    e = html.escape
    out = [f'<svg class="curve" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{e(title)}">',
           f'<text x="{left + pw / 2:.1f}" y="15" text-anchor="middle" font-size="12">{e(title)}</text>',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
    for t in _ticks(y0, y1):
        y = sy(t)
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text x="{left - 4}" y="{y + 3:.1f}" text-anchor="end" font-size="10">{t:g}</text>')
    for t in _ticks(x0, x1):
        x = sx(t)
        out.append(f'<text x="{x:.1f}" y="{top + ph + 13}" text-anchor="middle" font-size="10">{t:g}</text>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{top + ph + 30}" text-anchor="middle" font-size="10">step</text>')
    if legend:
        out.append(_legend(curves, left, height - 4))
    for c in curves:
        label = e(f"{c.label} (n={c.seeds})")
        if c.steps.size == 1:
            y = sy(float(c.mean[0]))
            out.append(f'<line class="level" x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="{c.colour}" '
                       f'stroke-dasharray="5 4" stroke-width="1.5"><title>{label}</title></line>')
            continue
        std = np.nan_to_num(c.std)
        if np.any(std > 0):
            upper = " ".join(f"{sx(s):.1f},{sy(m + d):.1f}" for s, m, d in zip(c.steps, c.mean, std))
            lower = " ".join(f"{sx(s):.1f},{sy(m - d):.1f}" for s, m, d in zip(c.steps[::-1], c.mean[::-1], std[::-1]))
            out.append(f'<polygon points="{upper} {lower}" fill="{c.colour}" fill-opacity="0.18" stroke="none"/>')
        points = " ".join(f"{sx(s):.1f},{sy(m):.1f}" for s, m in zip(c.steps, c.mean))
        out.append(f'<polyline points="{points}" fill="none" stroke="{c.colour}" stroke-width="1.8">'
                   f'<title>{label}</title></polyline>')
    out.append("</svg>")
    return "".join(out)
