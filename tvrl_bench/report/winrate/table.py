"""The win-rate table: stored judgments summarised as Win / Loss / Tie and a win rate for each opponent.

The table normalises every judgment so that the table's method is A, then reports for each opponent: Win, Loss,
Tie as percentages of all judgments, the win rate excluding ties = Win / (Win + Loss) with the std of the
per-seed win rates, its 95% interval (report/stats/intervals.py: prompt-clustered bootstrap, exact when one side
wins everything) and n = the number of judgments. The judgments themselves are `judgments.py`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tvrl_bench.report.stats.intervals import ValueStat, bootstrap_win_rate, value_stat
from tvrl_bench.report.tables.definition_types import WinrateTable
from tvrl_bench.report.tables.table_result import Column, Count, Interval, Missing, Number, Row, TableResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WinrateStat:
    """Counts and rates of A against B; rates in [0, 1]."""

    method_a: str
    method_b: str
    wins: int
    losses: int
    ties: int
    win_rate: float  # wins / (wins + losses), NaN when every judgment is a tie
    ci_low: float
    ci_high: float
    ci_method: str  # "bootstrap", "exact" or "none"
    seed_rates: ValueStat  # per-seed win rates excluding ties (std over seeds)
    prompts: int
    seeds: int
    judges: int

    @property
    def n(self) -> int:
        return self.wins + self.losses + self.ties


def oriented(frame: pd.DataFrame, method: str) -> pd.DataFrame:
    """Judgments where `method` is one side, rewritten so that it is method A (verdicts flipped as needed).

    frame: judgments with columns method_a, method_b, verdict (others such as run_a / run_b are carried along,
    run_a and run_b swapped with the methods); the result has the same columns, A's rows first.
    """
    is_a = frame["method_a"] == method
    is_b = frame["method_b"] == method
    flip = frame[is_b].copy()
    flip["method_a"], flip["method_b"] = frame.loc[is_b, "method_b"], frame.loc[is_b, "method_a"]
    if "run_a" in flip.columns and "run_b" in flip.columns:
        flip["run_a"], flip["run_b"] = frame.loc[is_b, "run_b"], frame.loc[is_b, "run_a"]
    flip["verdict"] = flip["verdict"].map({"win": "loss", "loss": "win", "tie": "tie"})
    return pd.concat([frame[is_a], flip], ignore_index=True)


def winrate_stat(pair: pd.DataFrame, resamples: int = 10_000, seed: int = 0) -> WinrateStat:
    """Statistics of judgments all oriented the same way (one method_a, one method_b).

    pair: judgments with columns prompt, seed, method_a, method_b, judge, verdict (at least one row).
    """
    wins = int((pair["verdict"] == "win").sum())
    losses = int((pair["verdict"] == "loss").sum())
    ties = int((pair["verdict"] == "tie").sum())
    decisive = pair.loc[pair["verdict"] != "tie", ["prompt", "seed"]].assign(won=pair["verdict"] == "win")
    by_prompt = decisive.groupby("prompt")["won"].agg(["sum", "count"])
    prompt_wins = by_prompt["sum"].to_numpy(dtype=np.int64)
    prompt_losses = by_prompt["count"].to_numpy(dtype=np.int64) - prompt_wins
    lo, hi, method = bootstrap_win_rate(prompt_wins, prompt_losses, resamples=resamples, seed=seed)
    per_seed = decisive.groupby("seed")["won"].mean()
    rate = wins / (wins + losses) if wins + losses else float("nan")
    return WinrateStat(
        method_a=str(pair["method_a"].iloc[0]),
        method_b=str(pair["method_b"].iloc[0]),
        wins=wins,
        losses=losses,
        ties=ties,
        win_rate=rate,
        ci_low=lo,
        ci_high=hi,
        ci_method=method,
        seed_rates=value_stat(per_seed.to_numpy()),
        prompts=int(pair["prompt"].nunique()),
        seeds=int(pair["seed"].nunique()),
        judges=int(pair["judge"].nunique()),
    )


def build_winrate_table(defn: WinrateTable, judgments: pd.DataFrame, study: str) -> TableResult:
    """Rows "<method> vs X" for every opponent X in the study's judgments (filtered by the table's judge glob).

    judgments: the columns of `JudgmentStore.frame` (study, prompt, seed, method_a, method_b, judge, verdict, ...).
    """
    frame = judgments[judgments["study"] == study] if len(judgments) else judgments
    if len(frame) and defn.judge is not None:
        frame = frame[frame["judge"].map(defn.accepts_judge)]
    notes: list[str] = []
    warnings: list[str] = []
    rows: list[Row] = []
    if len(frame):
        mine = oriented(frame, defn.method)
        others = len(frame) - len(mine)
        if others:
            notes.append(f"{others} judgments not involving {defn.method} are not shown.")
        present = [str(v) for v in mine["method_b"].unique()]
    else:
        mine, present = frame, []
    for opponent in defn.opponents.arrange(present):
        label = defn.label.format(a=defn.method, b=defn.opponents.label(opponent))
        pair = mine[mine["method_b"] == opponent] if len(mine) else mine
        if pair.empty:
            reason = f"no judgments of {defn.method} against {opponent}"
            warnings.append(f"table '{defn.name}': row '{label}': {reason}")
            rows.append(Row(label, [Missing(reason)] * 5 + [Count(0)]))
            continue
        s = winrate_stat(pair)
        pct = 100.0 / s.n
        rate = (
            ValueStat(100 * s.win_rate, 100 * s.seed_rates.std, s.seed_rates.n, ())
            if s.wins + s.losses
            else Missing("every judgment is a tie")
        )
        interval = Interval(100 * s.ci_low, 100 * s.ci_high, 50.0) if s.wins + s.losses else Missing("all ties")
        if s.wins + s.losses == 0:
            warnings.append(f"table '{defn.name}': row '{label}': every judgment is a tie, no win rate")
        rows.append(
            Row(label, [Number(s.wins * pct), Number(s.losses * pct), Number(s.ties * pct), rate, interval,
                        Count(s.n)])
        )
    result = TableResult(
        name=defn.name,
        kind="winrate",
        study=study,
        title=defn.title,
        caption=defn.caption,
        row_header=defn.row_header,
        columns=[
            Column("Win", "number"),
            Column("Loss", "number"),
            Column("Tie", "number"),
            Column("Win rate (excl. ties)", "value"),
            Column("95% CI", "interval"),
            Column("n", "count"),
        ],
        rows=rows,
        decimals=defn.decimals,
        n_column=False,
        warnings=warnings,
    )
    result.notes = [
        "Win, Loss, Tie: % of the n judgments (A = "
        f"{defn.method}, verdicts from its side). Win rate (excl. ties) = Win / (Win + Loss), ± std over seeds.",
        "95% CI: percentile bootstrap over prompts (10,000 resamples); exact Clopper-Pearson interval when one side "
        "wins every decisive judgment. † the CI includes 50%.",
    ] + notes + [f"Missing: {w.split(': ', 1)[1]}" for w in warnings]
    for w in warnings:
        log.warning("%s", w)
    return result
