"""Definition types: category columns in a stable order, the natural order of param values."""

from __future__ import annotations

from tvrl_bench.report.tables.definition_types import natural_key
from tvrl_bench.report.tables.definitions import load_table


def test_categories_present_in_a_stable_order():
    cols = load_table("rewards").columns[-1]  # read on the wide evaluation
    vbench = ["wide_eval/physics", "wide_eval/creativity", "wide_eval/dim/subject_consistency", "wide_eval/overall",
              "wide_eval/commonsense"]
    assert [(c.label, c.metric) for c in cols.expand(vbench)] == [
        ("Creativity", "wide_eval/creativity"), ("Common sense", "wide_eval/commonsense"), ("Physics", "wide_eval/physics")]
    toy = ["wide_eval/object", "wide_eval/motion", "wide_eval/background", "wide_eval/attribute", "wide_eval/overall",
           "train/loss"]
    assert [c.label for c in cols.expand(toy)] == ["Attribute", "Background", "Motion", "Object"]


def test_natural_order_of_values():
    assert sorted(["10", "2", "window7", "window10", "window3", "1"], key=natural_key) == [
        "1", "2", "10", "window3", "window7", "window10"]
