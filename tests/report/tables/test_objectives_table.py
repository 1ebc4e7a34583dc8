"""The `objectives` table (reports/tables/objectives.toml) regenerated from runs logged on a real SQLite MLflow store
as sweeps/objectives.gin logs them: a base run per seed (steps 0, carrying the study's first objective and credit),
then objective x credit runs evaluated at steps 0, 20, 40 and 60.

Every number is checked against values computed in this file: Overall and the paired deltas with statistics /
scipy (tests/report/helpers.py), steps to half gain by hand from the curves below.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tests.report.helpers import DASH, delta_text, in_format, mean_std, paired, read_rendered, value_text
from tvrl_bench.report import regenerate
from tvrl_bench.report.tables.definition_types import ANY, DecisionColumn, HalfGainColumn
from tvrl_bench.report.tables.definitions import load_table
from tvrl_bench.report.tables.half_gain import steps_to_half_gain

FORMATS = ("md", "tex", "html")
BASE = {0: 0.40, 1: 0.46, 2: 0.43}
STEPS = (0, 20, 40, 60)
# (objective, credit) -> seed -> eval/overall at STEPS (step 0 is the base policy's evaluation of that seed)
CURVES = {
    ("grpo", "uniform"): {0: [0.40, 0.42, 0.46, 0.48], 1: [0.46, 0.50, 0.51, 0.52], 2: [0.43, 0.44, 0.46, 0.47]},
    ("grpo", "window3"): {0: [0.40, 0.47, 0.50, 0.51], 1: [0.46, 0.52, 0.55, 0.56], 2: [0.43, 0.48, 0.52, 0.55]},
    ("nft", "uniform"): {0: [0.40, 0.41, 0.42, 0.50], 1: [0.46, 0.45, 0.44, 0.43], 2: [0.43, 0.45, 0.47, 0.49]},
    ("nft", "window3"): {0: [0.40, 0.50, 0.52, 0.53], 1: [0.46, 0.49, 0.55, 0.57], 2: [0.43, 0.52, 0.53, 0.54]},
}
# By hand: gain g(s) = v(s) - v(0), final gain G = g(60); the first step with g(s) >= G / 2.
HALF_GAIN_STEPS = {
    ("grpo", "uniform"): {0: 40, 1: 20, 2: 40},  # G .08 (g20 .02, g40 .06); G .06 (g20 .04); G .04 (g20 .01, g40 .03)
    ("grpo", "window3"): {0: 20, 1: 20, 2: 40},  # G .11 (g20 .07); G .10 (g20 .06); G .12 (g20 .05, g40 .09)
    ("nft", "uniform"): {0: 60, 2: 40},          # G .10 (g40 .02, g60 .10); seed 1 loses (G -.03): left out; G .06
    ("nft", "window3"): {0: 20, 1: 40, 2: 20},   # G .13 (g20 .10); G .11 (g20 .03, g40 .09); G .11 (g20 .09)
}
ROWS = [("grpo", "uniform", "GRPO (clipped ratio), uniform"), ("grpo", "window3", "GRPO (clipped ratio), 3×3 window"),
        ("nft", "uniform", "DiffusionNFT, uniform"), ("nft", "window3", "DiffusionNFT, 3×3 window")]


def params(**kw):
    base = {"policy": "toy", "sampler": "sage", "reward": "toy_oracle"}
    base.update({k: str(v) for k, v in kw.items()})
    return base


def final(objective: str, credit: str) -> dict[int, float]:
    return {seed: 100.0 * curve[-1] for seed, curve in CURVES[(objective, credit)].items()}


@pytest.fixture(scope="module")
def objectives_study(new_study, mlflow_store, tmp_path_factory):
    study = new_study("objectives", tables="objectives")
    for seed, value in BASE.items():  # the base trial carries the first objective and credit of the study's axes
        study.trial(params(objective="grpo", credit="uniform", method="base", seed=seed), {"eval/overall": value},
                    final_step=0)
    for (objective, credit), by_seed in CURVES.items():
        method = "GRPO" if credit == "uniform" else "TVRL"
        for seed, curve in by_seed.items():
            study.trial(params(objective=objective, credit=credit, method=method, seed=seed), {},
                        curves={"eval/overall": dict(zip(STEPS, curve))})
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=out, plots=False)
    assert list(summary["tables"]) == ["objectives"] and summary["tables"]["objectives"]["warnings"] == []
    return out / study.study


@pytest.mark.parametrize("fmt", FORMATS)
def test_objectives_table_every_number_and_label(objectives_study, fmt):
    header, rows = read_rendered(objectives_study, "objectives", fmt)
    assert header == [in_format(h, fmt) for h in ["Objective", "Overall", "Δ vs base", "Δ TVRL − uniform",
                                                  "Steps to half gain"]] + ["$n$" if fmt == "tex" else "n"]
    assert [r[0] for r in rows] == [in_format(label, fmt) for label in ["Base model"] + [r[2] for r in ROWS]]
    base = {seed: 100.0 * v for seed, v in BASE.items()}
    assert rows[0][1:] == [in_format(value_text(list(base.values())), fmt), "", "", "", "3"]
    for row, (objective, credit, _) in zip(rows[1:], ROWS):
        values = final(objective, credit)
        steps = list(HALF_GAIN_STEPS[(objective, credit)].values())
        assert row[1] == in_format(value_text(list(values.values())), fmt)
        assert row[2] == in_format(delta_text(values, base), fmt)  # the base run of each seed, paired
        tvrl_minus_uniform = delta_text(values, final(objective, "uniform")) if credit == "window3" else ""
        assert row[3] == in_format(tvrl_minus_uniform, fmt)
        assert row[4] == in_format(value_text(steps), fmt)
        assert row[5] == in_format("3" if len(steps) == 3 else "2–3", fmt)  # nft uniform: a seed without gain


def test_objectives_csv_full_precision(objectives_study):
    frame = pd.read_csv(objectives_study / "objectives.csv").set_index("Objective")
    for objective, credit, label in ROWS:
        row = frame.loc[label]
        steps = list(HALF_GAIN_STEPS[(objective, credit)].values())
        mean, std = mean_std(steps)
        assert [row["Steps to half gain"], row["Steps to half gain n"]] == [pytest.approx(mean), len(steps)]
        assert row["Steps to half gain std"] == pytest.approx(std)
        d, lo, hi = paired(final(objective, credit), {seed: 100.0 * v for seed, v in BASE.items()})
        assert [row["Δ vs base"], row["Δ vs base ci_low"], row["Δ vs base ci_high"]] == pytest.approx([d, lo, hi])
    assert math.isnan(frame.loc["Base model", "Steps to half gain"])


def test_the_base_runs_are_not_pooled_into_the_row_of_their_labels(objectives_study):
    """The base runs carry objective=grpo, credit=uniform: the fixed base row takes them, the GRPO row does not."""
    frame = pd.read_csv(objectives_study / "objectives.csv").set_index("Objective")
    assert frame.loc["GRPO (clipped ratio), uniform", "Overall"] == pytest.approx(mean_std(list(final("grpo", "uniform").values()))[0])
    notes = (objectives_study / "objectives.md").read_text()
    assert "Steps to half gain: per run, the first evaluation step at which eval/overall" in notes
    assert "minus method=base, any objective, any credit" in notes
    assert "pool" not in notes


def test_steps_to_half_gain_by_hand():
    curve = pd.Series({0: 0.5, 20: 0.625, 40: 0.75, 60: 1.0})  # gain 0.5: half is 0.25, reached exactly at 40
    assert steps_to_half_gain(curve) == 40
    assert steps_to_half_gain(pd.Series({60: 0.9, 0: 0.1, 20: 0.7})) == 20  # read in step order
    assert steps_to_half_gain(pd.Series({0: 0.5, 20: float("nan"), 40: 0.9})) == 40  # a NaN evaluation is skipped
    assert steps_to_half_gain(pd.Series({0: 0.3, 20: 0.8, 40: 0.6})) == 20  # the final gain, not the best one
    for flat in ({0: 0.5, 20: 0.6, 40: 0.5}, {0: 0.5, 20: 0.4}, {0: 0.5}, {}):
        assert math.isnan(steps_to_half_gain(pd.Series(flat, dtype=float)))


def test_the_shipped_definition():
    defn = load_table("objectives")
    assert [a.name for a in defn.rows_by] == ["objective", "credit"]
    assert [r.where for r in defn.fixed_rows] == [{"method": ("base",)}]
    overall, vs_base, vs_default, decision, tvrl, speed = defn.columns
    assert vs_base.paired and vs_base.baseline == {"method": "base", "objective": ANY, "credit": ANY}
    assert vs_default.paired and vs_default.optional
    assert vs_default.baseline == {"objective": "tvrl_question", "credit": "window3", "method": "TVRL"}
    assert decision == DecisionColumn("Decision")
    assert tvrl.paired and tvrl.where == {"method": ("TVRL",), "credit": ("window3",)}
    assert speed == HalfGainColumn("Steps to half gain", "eval/overall", {"method": ("GRPO", "TVRL")})
    assert defn.required_params() == ["objective", "credit", "method"]  # `*` names no required param
    assert DASH not in defn.caption
