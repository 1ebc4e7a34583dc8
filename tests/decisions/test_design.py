"""A staged study's arms: baselines, comparisons and controls; its seeds by stage; its fingerprint."""

from __future__ import annotations

import json

from tvrl_bench.decisions.design import StagedDesign, arm_name, plan_arms
from tvrl_bench.decisions.sequential import Comparison

SAMPLERS = [(("objective", o), ("sampler", s), ("credit", c))
            for o in ("tvrl_question",) for s in ("sage", "flow") for c in ("uniform", "window3")]
NULL = (("objective", "tvrl_question_null"), ("sampler", "sage"), ("credit", "window3"))


def test_each_arm_is_compared_with_its_twin_under_the_baseline_values_and_a_twinless_arm_is_a_control():
    plan = plan_arms([*SAMPLERS, NULL], {"credit": "uniform"})
    assert plan.comparisons == [
        Comparison("objective=tvrl_question sampler=sage credit=window3", "objective=tvrl_question sampler=sage credit=uniform"),
        Comparison("objective=tvrl_question sampler=flow credit=window3", "objective=tvrl_question sampler=flow credit=uniform"),
    ]
    assert plan.baselines == ["objective=tvrl_question sampler=sage credit=uniform",
                              "objective=tvrl_question sampler=flow credit=uniform"]
    assert plan.controls == ["objective=tvrl_question_null sampler=sage credit=window3"]


def test_a_baseline_of_several_axes_compares_every_arm_with_one_arm():
    arms = [(("objective", o), ("credit", c)) for o, c in
            [("tvrl_question", "window3"), ("grpo", "window3"), ("grpo", "uniform"), ("nft", "uniform")]]
    plan = plan_arms(arms, {"objective": "tvrl_question", "credit": "window3"})
    assert {c.baseline for c in plan.comparisons} == {"objective=tvrl_question credit=window3"}
    assert [c.arm for c in plan.comparisons] == ["objective=grpo credit=window3", "objective=grpo credit=uniform",
                                                 "objective=nft credit=uniform"]


def test_stages_take_the_seeds_in_order_and_later_seeds_belong_to_no_stage():
    design = StagedDesign.from_study({"baseline": {"credit": "uniform"}, "seeds_per_stage": 2, "max_stages": 2},
                                     [7, 3, 5, 1, 9])
    assert design.seeds == (7, 3, 5, 1)
    assert design.stage_seeds(1) == (7, 3) and design.stage_seeds(2) == (5, 1)
    assert [design.stage_of(s) for s in (7, 3, 5, 1, 9)] == [1, 1, 2, 2, None]
    assert (design.alpha, design.margin, design.metric) == (0.05, 0.0, "wide_eval/overall")


def test_the_fingerprint_changes_with_every_setting_and_the_arms_but_not_their_order():
    arms = [*SAMPLERS, NULL]
    base = StagedDesign.from_study({"baseline": {"credit": "uniform"}}, list(range(15)))
    assert base.fingerprint(arms) == base.fingerprint(list(reversed(arms)))
    changed = [StagedDesign.from_study({"baseline": {"credit": "uniform"}, **extra}, list(range(20)))
               for extra in ({"alpha": 0.1}, {"margin": 2.0}, {"max_stages": 4}, {"metric": "eval/overall"})]
    assert len({d.fingerprint(arms) for d in [base, *changed]}) == 5
    assert base.fingerprint(arms) != base.fingerprint(arms[:-1])
    assert json.loads(base.fingerprint(arms))["arms"] == sorted(arm_name(a) for a in arms)
