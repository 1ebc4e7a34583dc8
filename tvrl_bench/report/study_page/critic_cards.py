"""The study page's critic cards: each critic's quality against the exact evaluator, as `tvrl-bench critic-card
--study STUDY` measured it and logged it on the study's parent run (`critic_card.csv`, one row per critic, rollout
set and noise seed). The page shows one line per critic: agreement on the base's rollouts (per seed) and on a
trained policy's, calibration (ECE), map locality beside a uniform map's share, the critic's mean 0-1 reading beside
the evaluator's, the inversion rates on the base's rollouts (the share of evaluator-ordered pairs of one prompt's
rollouts that the critic orders the other way: by its reward, per check, on the pairs a vivid bias concerns, and
its worst asked colour or check kind; above one half predicts that RL exploits the critic there), and seconds per
video.
"""

from __future__ import annotations

import csv
import html
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

CARD_ARTIFACT = "critic_card.csv"
INVERSION_HEADER = "inversion, base: reward / checks / vivid pairs / worst key"
POOLED_INVERSIONS = ("inversion", "inversion_checks", "inversion_vivid")
e = html.escape


@dataclass
class CardSummary:
    """One critic's card: means over its rows of a rollout set (base: the untrained policy; trained: a trial's)."""

    critic: str
    agreement_base: list[float]  # one per base seed
    agreement_trained: float
    ece: float
    locality: float
    locality_uniform: float
    means_base: tuple[float, float]  # (critic, evaluator)
    means_trained: tuple[float, float]
    seconds_per_video: float
    inversions: tuple[float, float, float] = (math.nan, math.nan, math.nan)  # reward, checks, vivid pairs (base)
    worst_inversion: tuple[str, float] = ("", math.nan)  # the asked colour or check kind inverted most (base)


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _mean(rows: list[dict], key: str) -> float:
    values = [v for v in (_number(r.get(key)) for r in rows) if not math.isnan(v)]
    return sum(values) / len(values) if values else math.nan


def summarize(rows: list[dict]) -> list[CardSummary]:
    """Per critic, in the rows' order; values may be numbers or the CSV's strings."""
    out = []
    for name in dict.fromkeys(r["critic"] for r in rows):
        base = [r for r in rows if r["critic"] == name and r["policy"] == "base"]
        trained = [r for r in rows if r["critic"] == name and r["policy"] == "trained"]
        out.append(CardSummary(
            name, [_number(r["agreement"]) for r in base], _mean(trained, "agreement"), _mean(base, "ece"),
            _mean(base, "locality"), _mean(base, "locality_baseline"),
            (_mean(base, "critic_mean"), _mean(base, "evaluator_mean")),
            (_mean(trained, "critic_mean"), _mean(trained, "evaluator_mean")),
            _mean(base + trained, "seconds_per_video"),
            tuple(_mean(base, k) for k in POOLED_INVERSIONS), _worst(base)))
    return out


def _worst(rows: list[dict]) -> tuple[str, float]:
    """The per-key inversion column (`inversion_<key>`) with the highest mean over rows, and that mean."""
    keys = sorted({k for r in rows for k in r if k.startswith("inversion_") and k not in POOLED_INVERSIONS})
    means = [(k.removeprefix("inversion_"), _mean(rows, k)) for k in keys]
    means = [m for m in means if not math.isnan(m[1])]
    return max(means, key=lambda m: m[1]) if means else ("", math.nan)


def fmt(values: list[float] | float, digits: int = 3) -> str:
    """' / '-joined values, NaNs left out; 'n/a' when none is left."""
    kept = [v for v in (values if isinstance(values, list) else [values]) if not math.isnan(v)]
    return " / ".join(f"{v:.{digits}f}" for v in kept) if kept else "n/a"


def locality_text(card: CardSummary) -> str:
    """'0.615 (0.25)': the critic's locality beside a uniform map's share; 'n/a' when it has none."""
    text = fmt(card.locality)
    return text if text == "n/a" else f"{text} ({fmt(card.locality_uniform, 2)})"


def inversion_text(card: CardSummary) -> str:
    """'0.140 / 0.050 / 0.020 / 0.081 (blue)': reward, checks, vivid pairs, the worst key (named where above 0;
    n/a where missing)."""
    pooled = " / ".join(fmt(v) for v in card.inversions)
    key, worst = card.worst_inversion
    return f"{pooled} / {fmt(worst)}" + (f" ({key})" if key and worst > 0 else "")


def holds_card(client, run_id: str) -> bool:
    """Whether the run (a study's parent) has logged a card (`client`: an MlflowClient)."""
    return any(a.path == CARD_ARTIFACT for a in client.list_artifacts(run_id))


def read_cards(download: Callable[[str, str], Path | None], parent_run_id: str | None) -> list[dict] | None:
    """The parent run's card rows, or None when it logged none (`download(run_id, path)` returns a local file)."""
    if not parent_run_id:
        return None
    path = download(parent_run_id, CARD_ARTIFACT)
    if path is None or not Path(path).is_file():
        return None
    with Path(path).open(newline="") as f:
        return list(csv.DictReader(f))


def critic_cards_section(cards: list[CardSummary], study_critics: list[str]) -> list[str]:
    """The panel's HTML lines ([] without cards); the study's own critics first, the others marked."""
    if not cards:
        return []
    out = ['<section id="critic-cards"><h2>Critic cards</h2>',
           '<p class="meta">Each critic measured against the exact evaluator (<code>tvrl-bench critic-card</code>): '
           'agreement with its verdict per check (for a scalar scorer, its score rounded to the share of checks '
           'passed) on the base\'s rollouts per noise seed and on a trained policy\'s, expected calibration error, '
           'the share of its input gradient inside the judged slot (a uniform map\'s share in brackets), its mean '
           '0-1 reading beside the evaluator\'s, the inversion rates on the base (the share of pairs of one '
           'prompt\'s rollouts that the evaluator orders and the critic orders the other way: by the critic\'s '
           'reward, per check, on the pairs a vivid bias concerns, and the worst asked colour; above one half '
           'predicts that RL exploits the critic), and seconds per video.</p>',
           '<table id="critic-cards-table"><thead><tr><th>Critic</th><th>Agreement, base</th><th>Agreement, trained'
           '</th><th>ECE</th><th>Locality (uniform)</th><th>Critic / evaluator mean, base</th>'
           f'<th>Critic / evaluator mean, trained</th><th>{e(INVERSION_HEADER.capitalize())}</th><th>s / video</th>'
           '</tr></thead><tbody>']
    ordered = sorted(cards, key=lambda c: c.critic not in study_critics)
    for c in ordered:
        name = c.critic if c.critic in study_critics else f"{c.critic} (not in this study)"
        out.append(f'<tr data-critic="{e(c.critic)}"><td>{e(name)}</td><td>{fmt(c.agreement_base)}</td>'
                   f'<td>{fmt(c.agreement_trained)}</td><td>{fmt(c.ece)}</td><td>{e(locality_text(c))}</td>'
                   f'<td>{fmt(list(c.means_base))}</td><td>{fmt(list(c.means_trained))}</td>'
                   f'<td class="inversion">{e(inversion_text(c))}</td>'
                   f'<td>{fmt(c.seconds_per_video, 4)}</td></tr>')
    out.append("</tbody></table></section>")
    return out
