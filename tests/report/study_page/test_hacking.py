"""The hacking panel's rows from methods' runs: the efficiency against the oracle, the false-yes rate and the
Gao-style gain curves, by hand."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from tvrl_bench.report.study_page.gain_curves import gain_curves, method_curve, run_gains
from tvrl_bench.report.study_page.hacking import hacking_rows
from tvrl_bench.report.study_page.methods import Method, Source

SEEDS = ("0", "1", "2")


def method(label: str, reward: str, overall: list[float], critic: list[float], base: bool = False,
           false_yes: list[float] | None = None, credit: str = "uniform") -> Method:
    runs = pd.DataFrame({"run_id": [f"{label}{s}" for s in SEEDS], "_seed": list(SEEDS),
                         "params.reward": reward, "params.credit": credit,
                         "metrics.eval/overall": overall, "metrics.eval/critic_reward": critic})
    if false_yes is not None:
        runs["metrics.eval/critic_false_yes"] = false_yes
    return Method(label, base, {"reward": reward}, runs)


def test_efficiency_divides_by_the_oracle_with_the_same_credit_and_seeds():
    base_oracle = method("base", "toy_oracle", [0.5] * 3, [0.5] * 3, base=True)
    base_weak = method("base", "weak", [0.5] * 3, [0.6] * 3, base=True)
    base = Method("base", True, {}, pd.concat([base_oracle.runs, base_weak.runs], ignore_index=True))
    methods = [base, method("oracle", "toy_oracle", [0.75, 0.7, 0.8], [0.75, 0.7, 0.8]),
               method("weak", "weak", [0.6, 0.55, 0.65], [0.8, 0.76, 0.84]),
               method("weak-window", "weak", [0.6, 0.55, 0.65], [0.8, 0.76, 0.84], credit="window3")]
    rows = {r.method: r for r in hacking_rows(methods, Source("eval", ""))}
    # evaluator gains over the base (0.5): oracle 50, 40, 60 (mean 50); weak 20, 10, 30 (mean 20)
    assert rows["weak"].efficiency == pytest.approx(0.4) and rows["weak"].baseline == "the base model"
    assert math.isnan(rows["oracle"].efficiency)  # the oracle is the yardstick
    assert math.isnan(rows["weak-window"].efficiency)  # no oracle trained with window credit
    # the weak critic's gains: (0.2, 0.16, 0.24) / 0.4 -> 50, 40, 60 against the evaluator's 20, 10, 30: overstated
    assert rows["weak"].critic_gain.delta == pytest.approx(50.0) and rows["weak"].verdict == "overstated"


def test_efficiency_and_false_yes_with_step_zero_baselines():
    start = {"overall": 0.5, "critic": 0.6, "false_yes": 0.1}
    methods = [method("oracle", "toy_oracle", [0.75, 0.7, 0.8], [0.75, 0.7, 0.8]),
               method("weak", "weak", [0.6, 0.55, 0.65], [0.8, 0.76, 0.84], false_yes=[0.2, 0.25, 0.3])]
    step_zero = lambda run_id, metric: start[metric.split("/")[1].replace("critic_reward", "critic")
                                             .replace("critic_false_yes", "false_yes")]
    rows = {r.method: r for r in hacking_rows(methods, Source("eval", ""), step_zero)}
    # evaluator gains: oracle (0.25, 0.2, 0.3) / 0.5 -> 50, 40, 60; weak (0.1, 0.05, 0.15) / 0.5 -> 20, 10, 30
    assert rows["weak"].efficiency == pytest.approx(20 / 50)
    assert rows["weak"].false_yes.delta == pytest.approx(100 * (0.25 - 0.1))
    assert rows["weak"].verdict == "hacking"  # its false-yes rate rose by 15 points [CI above 0]
    assert rows["oracle"].false_yes is None and rows["oracle"].verdict == "none"


def history(values: dict[int, float]) -> pd.Series:
    return pd.Series(values, dtype=float)


class Cache:
    def __init__(self, histories: dict[tuple[str, str], pd.Series]) -> None:
        self.histories = histories

    def get(self, run_id: str, metric: str) -> pd.Series:
        return self.histories.get((run_id, metric), pd.Series(dtype=float))


def legend(svg: str) -> list[tuple[str, str]]:
    """(colour, label) of each entry of a plot's legend row, in order."""
    (row,) = re.findall(r'<g class="legend">(.*?)</g>', svg)
    return re.findall(r'stroke="(#[0-9a-f]{6})"[^>]*/><text[^>]*>([^<]+)</text>', row)


def test_gain_curves_start_at_zero_and_average_seeds():
    assert run_gains(history({0: 0.5, 2: 0.75, 4: 0.25})).tolist() == pytest.approx([0.0, 50.0, -50.0])
    assert run_gains(history({2: 0.5, 4: 0.6})) is None  # no step-0 evaluation
    m = method("weak", "weak", [0.0] * 3, [0.0] * 3)
    cache = Cache({(f"weak{s}", "eval/overall"): history({0: 0.5, 4: 0.5 + 0.1 * i}) for i, s in enumerate(SEEDS)}
                  | {(f"weak{s}", "eval/critic_reward"): history({0: 0.6, 4: 0.8}) for s in SEEDS})
    curve = method_curve(m, "eval/overall", cache, 1)
    assert curve.steps.tolist() == [0.0, 4.0] and curve.mean.tolist() == pytest.approx([0.0, 20.0])
    assert curve.std[1] == pytest.approx(20.0) and curve.seeds == 3
    plots, notes = gain_curves([m, method("blind", "weak", [0.0] * 3, [0.0] * 3)], cache)
    assert [label for label, _ in plots] == ["weak"] and "critic gain" in plots[0][1]
    assert legend(plots[0][1]) == [("#1f77b4", "critic gain (eval/critic_reward)"),
                                   ("#ff7f0e", "evaluator gain (eval/overall)")]
    assert notes == ["blind: no gain curve (its runs hold no step-0 evaluation of both eval/critic_reward and "
                     "eval/overall: runs loaded from a record saved before records kept curves, or trials with "
                     "eval_every = 0)."]
