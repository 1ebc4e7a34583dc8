"""A study's `sweeps.study.decide` is checked before anything runs: each mistake is one line naming the study
file, the line and the key, with the fix (sweeps/validate_decide.py)."""

from __future__ import annotations

import pytest

from tvrl_bench.config import ConfigError
from tvrl_bench.sweeps.plan import load_study

AXES = "{'objective': ['tvrl_question'], 'credit': ['uniform', 'window3']}"


def study_file(tmp_path, decide: str, seeds: str = "list(range(15))") -> str:
    path = tmp_path / "staged.gin"
    seeds_text = "[" + ", ".join(str(s) for s in range(15)) + "]" if seeds == "list(range(15))" else seeds
    path.write_text("sweeps.study.name = 'staged'\n"
                    f"sweeps.study.axes = {AXES}\n"
                    f"sweeps.study.seeds = {seeds_text}\n"
                    "sweeps.study.decide = {\n"
                    f"    {decide}\n"
                    "}\n")
    return str(path)


@pytest.mark.parametrize("decide, line, needle", [
    ("'baseline': {'credit': 'uniform'}, 'alpah': 0.05", 5, "unknown key 'alpah'; did you mean 'alpha'?"),
    ("'alpha': 0.05", 4, "needs a 'baseline'"),
    ("'baseline': {'critic': 'uniform'}", 5, "names the axis 'critic', which the study does not have; did you mean 'credit'?"),
    ("'baseline': {'credit': 'unifrm'}", 5, "'unifrm' is not one of axis 'credit''s values; did you mean 'uniform'?"),
    ("'baseline': {'credit': 'uniform'}, 'alpha': 0.7", 5, "['alpha'] = 0.7 must be a family-wise error rate between 0 and 0.5"),
    ("'baseline': {'credit': 'uniform'}, 'alpha': 0.0", 5, "['alpha'] = 0.0 must be"),
    ("'baseline': {'credit': 'uniform'}, 'seeds_per_stage': 4", 5,
     "['seeds_per_stage'] = 4 cannot reach alpha / max_stages = 0.0167 at a stage (the smallest two-sided p-value of 4 "
     "seeds against 4 is 2/C(8,4) = 0.029); give at least 5, or fewer stages"),
    ("'baseline': {'credit': 'uniform'}, 'max_stages': 0", 5, "['max_stages'] = 0 must be a whole number of stages"),
    ("'baseline': {'credit': 'uniform'}, 'margin': -1.0", 5, "['margin'] = -1.0 must be a difference in table points"),
])
def test_a_bad_decide_value_is_one_line_naming_file_line_and_key(tmp_path, decide, line, needle):
    path = study_file(tmp_path, decide)
    with pytest.raises(ConfigError) as err:
        load_study(path)
    (message,) = str(err.value).splitlines()
    assert message.startswith(f"{path}:{line}: sweeps.study.decide") and needle in message, message


def test_too_few_seeds_for_the_stages_names_the_seeds_line_and_the_count(tmp_path):
    path = study_file(tmp_path, "'baseline': {'credit': 'uniform'}", seeds="[0, 1, 2]")
    with pytest.raises(ConfigError, match=r":3: sweeps.study.seeds lists 3 seeds, but sweeps.study.decide runs up to "
                                          r"3 stages of 5 seeds, taken in order: list at least 15 seeds$"):
        load_study(path)


def test_a_good_decide_loads_with_its_defaults(tmp_path):
    study, _ = load_study(study_file(tmp_path, "'baseline': {'credit': 'uniform'}, 'margin': 3.0"))
    assert study.decide == {"baseline": {"credit": "uniform"}, "margin": 3.0}


def test_a_misspelt_decision_metric_is_refused_before_anything_runs_naming_the_known_metrics(tmp_path):
    from tvrl_bench.sweeps.plan import expand

    path = study_file(tmp_path, "'baseline': {'credit': 'uniform'}, 'max_stages': 1,\n    'metric': 'wide_eval/overal'",
                      seeds="[0, 1, 2, 3, 4]")
    study, resolved = load_study(path)
    with pytest.raises(ConfigError) as err:
        expand(study, resolved)
    (message,) = str(err.value).splitlines()
    assert message.startswith(f"{path}:6: sweeps.study.decide['metric'] = 'wide_eval/overal' is not an "
                              "evaluation metric the study's trials log; did you mean 'wide_eval/overall'")
    assert "they log wide_eval/overall, " in message and "eval/slot" in message and "eval/critic_reward" in message


def test_a_logged_decision_metric_plans(tmp_path):
    from tvrl_bench.sweeps.plan import expand

    path = study_file(tmp_path, "'baseline': {'credit': 'uniform'}, 'max_stages': 1, 'metric': 'eval/slot'",
                      seeds="[0, 1, 2, 3, 4]")
    assert len(expand(*load_study(path))) == 10
