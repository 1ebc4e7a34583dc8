"""A table's one-line answer on the study page (study_page/tables.py): which rows their intervals separate, and no
answer at all where the cells pool runs of arms the table does not show."""

from __future__ import annotations

from tests.report.tables.test_metric_table import runs_of
from tvrl_bench.report.study_page.tables import table_answer
from tvrl_bench.report.tables.definitions import load_table
from tvrl_bench.report.tables.metric_table import build_metric_table

# Two critics x uniform / window3 credit, 3 seeds: under critic a window3 gains 10 points, under b it loses 10.
CRITICS = [
    {"reward": reward, "credit": credit, "method": "GRPO" if credit == "uniform" else "TVRL", "seed": seed,
     "eval/overall": 0.5 + (0.1 if reward == "a" else -0.1) * (credit == "window3") + 0.001 * seed}
    for reward in ("a", "b") for credit in ("uniform", "window3") for seed in range(3)
]


def test_a_table_pooling_an_axis_it_does_not_show_states_no_answer_and_says_why():
    result = build_metric_table(load_table("credit"), runs_of(CRITICS))
    assert result.pooled == {"reward": ["a", "b"]}
    assert table_answer(result) == (
        "No answer: its cells pool runs that differ in reward (a, b), which the table does not show, so each seed's "
        "value averages several arms; add reward to the table's [rows] by (or where) to read one.")
    assert any("Cells pool runs that differ in reward (a, b)" in note for note in result.notes)


def test_the_same_runs_in_a_table_that_shows_the_axis_state_their_answer():
    result = build_metric_table(load_table("credit"), runs_of([r for r in CRITICS if r["reward"] == "a"]))
    assert result.pooled == {}
    assert table_answer(result).startswith("Separated (95% CI excludes 0): Δ vs uniform: 3×3 window (default) +10.00")


def test_a_fixed_row_pooling_an_axis_the_table_shows_keeps_the_answer():
    """The rewards table's base row averages each critic's own base run (the same untrained model, configured with
    the critic's objective): a row its author defined so, noted, not an arm hidden in the table's rows."""
    base = [{"reward": r, "credit": "window3", "objective": "tvrl_video" if r == "b" else "tvrl_question",
             "method": "base", "seed": s, "eval/overall": 0.4 + 0.001 * s} for r in ("a", "b") for s in range(3)]
    result = build_metric_table(load_table("rewards"), runs_of(base + CRITICS))
    assert result.pooled == {}
    assert any("Cells pool runs that differ in objective (tvrl_question, tvrl_video)" in n for n in result.notes)
    assert not table_answer(result).startswith("No answer")
