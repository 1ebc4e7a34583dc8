"""Expanding studies into trials: combinations x seeds, base rows, keys, and errors before anything runs."""

from __future__ import annotations

import pytest

from tests.sweeps.helpers import write_study
from tvrl_bench import config as gin_config
from tvrl_bench.config import ConfigError
from tvrl_bench.sweeps.plan import expand, load_study
from tvrl_bench.training.trial.identity import trial_key


def test_every_combination_and_seed_is_a_trial_with_a_stable_unique_key(tmp_path):
    path = write_study(tmp_path, "/nowhere", axes="{'sampler': ['sage', 'flow', 'dance'], 'credit': ['uniform', 'window3']}", seeds="[0, 1, 2]")
    study, resolved = load_study(str(path))
    trials = expand(study, resolved)
    assert len(trials) == 3 * 2 * 3
    assert len({t.key for t in trials}) == len(trials)
    assert trials[0].labels == {"sampler": "sage", "credit": "uniform"} and trials[0].seed == 0
    assert "components/samplers/flow.gin" in trials[6].files
    again = expand(*load_study(str(path))[:1], resolved)
    assert [t.key for t in again] == [t.key for t in trials]
    longer = expand(study, resolved, ["training.trial.steps = 50"])
    assert not {t.key for t in longer} & {t.key for t in trials}


def test_each_seed_s_key_is_the_key_of_its_own_config_parsed_alone(tmp_path):
    """expand parses an arm once and binds each further seed directly: the keys must equal parsing each trial's
    files and bindings on their own (base rows, whose seed binding is not the last, included)."""
    path = write_study(tmp_path, "/nowhere", axes="{'credit': ['uniform', 'window3']}", seeds="[0, 3, 1]")
    path.write_text(path.read_text().replace("sweeps.study.seeds", "sweeps.study.base = True\nsweeps.study.seeds"))
    study, resolved = load_study(str(path))
    trials = expand(study, resolved, ["training.trial.eval_prompts = 8"])
    assert len(trials) == 3 + 2 * 3
    for trial in trials:
        gin_config.load_config(list(trial.files), list(trial.bindings))
        assert trial_key() == trial.key, trial


def test_base_rows_train_nothing(tmp_path):
    path = write_study(tmp_path, "/nowhere", axes="{'reward': ['toy_oracle']}", seeds="[0, 1]", extra=())
    text = path.read_text().replace("sweeps.study.seeds", "sweeps.study.base = True\nsweeps.study.seeds")
    path.write_text(text)
    study, resolved = load_study(str(path))
    trials = expand(study, resolved)
    base = [t for t in trials if t.base]
    assert len(base) == 2 and len(trials) == 4
    assert all("training.trial.steps = 0" in t.bindings for t in base)


def test_base_per_reward_gives_each_critic_its_base_row_in_its_first_allowed_configuration(tmp_path):
    axes = "{'objective': ['tvrl_question', 'tvrl_video'], 'reward': ['toy_oracle', 'toy_verdicts'], 'credit': ['uniform', 'window3']}"
    path = write_study(tmp_path, "/nowhere", axes=axes, seeds="[0, 1]", extra=())
    text = path.read_text().replace("sweeps.study.seeds", "sweeps.study.base = ['reward']\n"
                                    "sweeps.study.exclude = [{'objective': 'tvrl_question', 'reward': 'toy_verdicts'},"
                                    " {'objective': 'tvrl_video', 'reward': 'toy_oracle'}]\nsweeps.study.seeds")
    path.write_text(text)
    study, resolved = load_study(str(path))
    trials = expand(study, resolved)
    base = [t for t in trials if t.base]
    assert [(t.labels["objective"], t.labels["reward"], t.labels["credit"], t.seed) for t in base] == [
        ("tvrl_question", "toy_oracle", "uniform", 0), ("tvrl_question", "toy_oracle", "uniform", 1),
        ("tvrl_video", "toy_verdicts", "uniform", 0), ("tvrl_video", "toy_verdicts", "uniform", 1)]
    assert len(trials) == 4 + 2 * 2 * 2
    as_true = load_study(str(path))[0]
    as_true.base, as_true.exclude = True, []
    first = [t for t in expand(as_true, resolved) if t.base]
    assert first[0].key == base[0].key  # base = True keeps its key: the first value of every axis


def test_base_must_name_the_study_s_axes(tmp_path):
    path = write_study(tmp_path, "/nowhere", axes="{'reward': ['toy_oracle']}", extra=())
    path.write_text(path.read_text().replace("sweeps.study.seeds", "sweeps.study.base = ['rewrd']\nsweeps.study.seeds"))
    with pytest.raises(ConfigError, match=r"sweeps.study.base = \['rewrd'\] must be True, False or a list of the study's axes \(reward\)"):
        load_study(str(path))


def test_profile_override_swaps_the_profile_and_its_axes(tmp_path):
    path = write_study(tmp_path, "/nowhere", axes="{'reward': ['toy_oracle']}")
    path.write_text(path.read_text() + "sweeps.study.profile_axes = {'other': {'reward': ['toy_learned']}}\n"
                    "sweeps.study.profiles = {'other': 'components/profiles/toy_v1.gin'}\n")
    study, _ = load_study(str(path), profile="other")
    assert study.axes["reward"] == ["toy_learned"] and study.profile == "components/profiles/toy_v1.gin"


def test_an_unknown_preset_names_the_study_file_line_and_the_closest_preset(tmp_path):
    path = write_study(tmp_path, "/nowhere", axes="{\n    'sampler': ['sage', 'flwo'],\n}")
    study, resolved = load_study(str(path))
    with pytest.raises(ConfigError) as err:
        expand(study, resolved)
    message = str(err.value)
    assert f"{resolved}:3:" in message and "'flwo'" in message and "did you mean 'flow'" in message


def test_an_unknown_axis_and_a_malformed_study_file(tmp_path):
    path = write_study(tmp_path, "/nowhere", axes="{'samplr': ['sage']}")
    study, resolved = load_study(str(path))
    with pytest.raises(ConfigError, match="unknown axis 'samplr'; did you mean 'sampler'"):
        expand(study, resolved)
    bad = tmp_path / "bad.gin"
    bad.write_text("sweeps.study.name = 'x'\nsweeps.study.axes = {'credit': ['uniform'\n")
    with pytest.raises(ConfigError, match="bad.gin:"):
        load_study(str(bad))


def test_excluded_combinations_are_left_out_and_bad_rules_name_the_line(tmp_path):
    path = write_study(tmp_path, "/nowhere", axes="{'objective': ['grpo', 'null'], 'credit': ['uniform', 'window3']}", seeds="[0, 1]")
    path.write_text(path.read_text() + "sweeps.study.exclude = [{'objective': 'null', 'credit': 'uniform'}]\n")
    study, resolved = load_study(str(path))
    trials = expand(study, resolved)
    combos = {tuple(t.labels.values()) for t in trials}
    assert combos == {("grpo", "uniform"), ("grpo", "window3"), ("null", "window3")} and len(trials) == 6
    path.write_text(path.read_text().replace("'credit': 'uniform'}]", "'credit': 'window9'}]"))
    with pytest.raises(ConfigError, match=r"sweeps\.study\.exclude .*axis -> one of that axis's values, e\.g\. "
                                          r"\[\{'objective': 'null', 'credit': 'window3'\}\]$"):  # the study's own axes
        load_study(str(path))
