"""`training.trial`: components from their family macros, checked against their contracts; values in range;
and run_trial's message for a config that lacks a family."""

from __future__ import annotations

import gin
import pytest
from mlflow.tracking import MlflowClient

from tests.tracking.helpers import fresh_store
from tests.training.conftest import FAST
from tvrl_bench import registry
from tvrl_bench.config import ConfigError, load_config
from tvrl_bench.tracking.params import component_selector
from tvrl_bench.training.optimizers import OptimizerChoice
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.trial.run import TrialOptions, run_trial

# Every trial family but the one named: a config without that family's preset.
PRESETS = {"policy": "components/policies/toy.gin", "sampler": "components/samplers/sage.gin",
           "reward": "components/rewards/toy_oracle.gin", "credit": "components/credit/window3.gin",
           "objective": "components/objectives/grpo.gin", "evaluator": "components/evaluators/toy.gin",
           "dataset": "components/datasets/toy.gin"}


def toy(policy_path: str, *bindings: str, files=("components/profiles/toy_v1.gin",)):
    return load_config(list(files), [*FAST, f"policies.toy.path = '{policy_path}'", *bindings])


def test_the_trial_families_are_the_seven_fields_of_a_trial():
    assert [f.axis for f in registry.trial_families()] == [
        "policy", "sampler", "reward", "credit", "objective", "evaluator", "dataset"]


def test_components_not_passed_are_built_from_their_family_macros(tiny_policy_path):
    toy(tiny_policy_path, "SAMPLER = @samplers.flow()", "CREDIT = @credit.uniform()")
    settings = TrialSettings()
    expected = {"policy": "policies.toy", "sampler": "samplers.flow", "reward": "rewards.toy_oracle",
                "credit": "credit.uniform", "objective": "objectives.grpo", "evaluator": "evaluators.toy",
                "dataset": "datasets.toy"}
    for family in registry.trial_families():
        component = getattr(settings, family.axis)
        assert isinstance(component, family.contract_class())
        if family.axis != "dataset":  # a dataset preset builds a PromptSet through a registered function
            assert component_selector(component) == expected[family.axis]
    assert len(settings.dataset.train) == 16 and len(settings.dataset.eval) == 8  # FAST's datasets.toy bindings
    assert settings.prompts_per_step == 2  # FAST's binding


def test_a_component_passed_in_is_used_as_it_is_and_its_macro_is_not_needed(tiny_policy_path):
    registry.import_components()
    reward = registry.get("rewards.toy_oracle").target(score="prob")
    files = [path for axis, path in PRESETS.items() if axis != "reward"]
    toy(tiny_policy_path, files=files)  # nothing binds REWARD
    settings = TrialSettings(reward=reward)
    assert settings.reward is reward


def test_a_component_of_the_wrong_family_is_named_with_its_contract(tiny_policy_path):
    toy(tiny_policy_path, "REWARD = @samplers.flow()")
    with pytest.raises(registry.RegistryError) as caught:
        TrialSettings()
    message = str(caught.value)
    assert "training.trial.reward" in message and "FlowSampler is not a Reward" in message
    assert "bind REWARD to a rewards component" in message and "tvrl-bench list rewards" in message


def test_an_object_of_the_wrong_kind_passed_in_is_rejected(tiny_policy_path):
    toy(tiny_policy_path)
    with pytest.raises(registry.RegistryError, match=r"training\.trial\.credit: str is not a CreditRouter"):
        TrialSettings(credit="window3")


@pytest.mark.parametrize("missing", ["reward", "credit", "dataset"])
def test_a_missing_macro_is_named_with_a_preset_to_include(tiny_policy_path, missing):
    files = [path for axis, path in PRESETS.items() if axis != missing]
    toy(tiny_policy_path, files=files)
    macro = next(f for f in registry.trial_families() if f.axis == missing)
    with pytest.raises(registry.RegistryError) as caught:
        TrialSettings()
    message = str(caught.value)
    assert f"nothing is bound to {macro.macro}" in message
    assert f"components/{macro.name}/<name>.gin" in message and "components/profiles/toy.gin" in message


@pytest.mark.parametrize("binding, named", [
    ("steps = -1", "training.trial.steps = -1"),
    ("group_size = 1", "training.trial.group_size = 1"),
    ("advantage_std = 'batch'", "training.trial.advantage_std = 'batch'"),
    ("eval_prompts = 0", "training.trial.eval_prompts = 0"),
    ("checkpoint_every = 0", "training.trial.checkpoint_every = 0"),
])
def test_an_out_of_range_value_is_named_with_an_example(tiny_policy_path, binding, named):
    with pytest.raises(ConfigError) as caught:
        toy(tiny_policy_path, f"training.trial.{binding}")  # refused as the config is read
    message = str(caught.value)
    assert named in message and "must be" in message and "e.g. training.trial." in message


@pytest.mark.parametrize("binding, named", [
    ("learning_rate = 0.0", "training.optimizer.learning_rate = 0.0"),
    ("betas = (0.9, 1.0)", "training.optimizer.betas = (0.9, 1.0)"),
    ("weight_decay = -0.1", "training.optimizer.weight_decay = -0.1"),
    ("kind = 'sgd'", "training.optimizer.kind = 'sgd'"),
])
def test_an_optimizer_value_out_of_range_is_named_with_an_example(tiny_policy_path, binding, named):
    """The trial builds `training.optimizer` itself when nothing binds training.trial.optimizer: its values are
    checked all the same."""
    with pytest.raises(ConfigError) as caught:
        toy(tiny_policy_path, f"training.optimizer.{binding}")  # refused as the config is read
    message = str(caught.value)
    assert named in message and "must be" in message and "e.g. training.optimizer." in message


@pytest.mark.parametrize("name, value", [("steps", "3"), ("eval_every", "5"), ("eval_subset", "2")])
def test_a_value_of_the_wrong_type_passed_by_hand_is_named(tiny_policy_path, name, value):
    """The declared checks also run when a TrialSettings is built by hand: a wrong type is a ValueError naming the
    parameter, not a bare TypeError from comparing or converting it."""
    toy(tiny_policy_path)
    with pytest.raises(ValueError, match=rf"training\.trial\.{name} = {value!r}"):
        TrialSettings(**{name: value})


@pytest.mark.parametrize("name, value", [("betas", 0.9), ("learning_rate", "1e-4"), ("kind", None)])
def test_an_optimizer_value_of_the_wrong_type_passed_by_hand_is_named(name, value):
    with pytest.raises(ValueError, match=rf"training\.optimizer\.{name} = {value!r}"):
        OptimizerChoice(**{name: value})


def test_the_trial_builds_the_bound_optimizer_when_none_is_passed(tiny_policy_path):
    toy(tiny_policy_path, "training.optimizer.learning_rate = 3e-5")
    settings = TrialSettings()
    assert isinstance(settings.optimizer, OptimizerChoice)
    assert (settings.optimizer.kind, settings.optimizer.learning_rate) == ("adamw", 3e-5)
    assert not hasattr(settings, "learning_rate")  # one owner: the optimizer


def test_an_eval_subset_out_of_range_is_named_with_the_fix(tiny_policy_path):
    with pytest.raises(ConfigError, match=r"training\.trial\.eval_subset = 0 must be an integer >= 1 or None"):
        toy(tiny_policy_path, "training.trial.eval_subset = 0")  # refused as the config is read


def test_every_out_of_range_value_is_listed_at_once(tiny_policy_path):
    with pytest.raises(ConfigError) as caught:
        toy(tiny_policy_path, "training.trial.steps = -1", "training.trial.max_grad_norm = 0.0")  # refused as the config is read
    assert "training.trial.steps" in str(caught.value) and "training.trial.max_grad_norm" in str(caught.value)


def test_minibatches_must_divide_the_rollouts_of_a_step(tiny_policy_path):
    toy(tiny_policy_path, "training.trial.prompts_per_step = 1", "training.trial.group_size = 2")
    with pytest.raises(ValueError, match=r"minibatches = 3 must divide the 2 rollouts"):
        TrialSettings(minibatches=3)
    gin.clear_config()
    toy(tiny_policy_path, "training.trial.prompts_per_step = 3", "training.trial.group_size = 2",
        "training.trial.minibatches = 3")
    assert TrialSettings().minibatches == 3  # 6 rollouts in 3 minibatches of 2


def test_run_trial_names_the_profile_to_start_from_when_a_family_is_missing(tiny_policy_path, tmp_path,
                                                                              tmp_path_factory, monkeypatch):
    """And records a FAILED run for it, so reports list the trial."""
    monkeypatch.chdir(tmp_path)
    uri = fresh_store(tmp_path_factory, tmp_path)
    config = tmp_path / "partial.gin"
    includes = [f"include '{path}'" for axis, path in PRESETS.items() if axis != "reward"]
    config.write_text("\n".join([*includes, f"policies.toy.path = '{tiny_policy_path}'", *FAST]) + "\n")
    options = TrialOptions(tracking_uri=uri, out_dir=str(tmp_path / "out"), progress=False, cpu=True)
    with pytest.raises(ConfigError) as caught:
        run_trial([str(config)], ["training.trial.steps = 1"], options)
    message = str(caught.value)
    assert "nothing is bound to REWARD" in message
    assert "start from components/profiles/toy.gin" in message and "include 'components/profiles/toy.gin'" in message
    assert "policy, sampler, reward, credit, objective, evaluator, dataset" in message

    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("trials").experiment_id])
    assert len(runs) == 1 and runs[0].info.status == "FAILED"
    assert runs[0].data.tags["tvrl.error"].startswith("ConfigError: nothing is bound to REWARD")
    assert runs[0].data.params["credit"] == "window3" and runs[0].data.params["method"] == "TVRL"


def test_run_trial_names_a_component_of_the_wrong_family(tiny_policy_path, tmp_path, tmp_path_factory, monkeypatch):
    monkeypatch.chdir(tmp_path)
    uri = fresh_store(tmp_path_factory, tmp_path)
    options = TrialOptions(tracking_uri=uri, out_dir=str(tmp_path / "out"), progress=False, cpu=True)
    with pytest.raises(ConfigError, match=r"training\.trial\.credit: ToyOracle is not a CreditRouter"):
        run_trial(["components/profiles/toy_v1.gin"], [*FAST, f"policies.toy.path = '{tiny_policy_path}'",
                                                    "CREDIT = @rewards.toy_oracle()"], options)
