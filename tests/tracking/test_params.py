"""Run names and params: which preset each axis used, the method, and every operative gin parameter."""

from __future__ import annotations

import gin
import pytest
import torch

from tvrl_bench import registry
from tvrl_bench.config import PROJECT_ROOT, load_config
from tvrl_bench.credit.base import CreditRouter, GradientRouter
from tvrl_bench.tracking.params import (axis_run_name, component_selector, method_from_presets, method_of,
                                        operative_params, preset_names, presets_in_files, run_name)

TOY_FILES = ["components/profiles/toy_v1.gin", "components/policies/toy.gin", "components/samplers/sage.gin",
             "components/rewards/toy_oracle.gin", "components/credit/window3.gin", "components/objectives/grpo.gin",
             "components/evaluators/toy.gin", "components/datasets/toy.gin"]


def build(name: str):
    """A registered component built with its defaults."""
    registry.import_components()
    return registry.get(name).target()


class Handmade:
    """A component nobody registered."""


def built(sampler="samplers.sage", credit="credit.window", reward="rewards.toy_oracle"):
    return {"policy": Handmade(), "sampler": build(sampler), "reward": build(reward), "credit": build(credit)}


def test_preset_names_are_the_presets_that_selected_the_built_components():
    names = preset_names(TOY_FILES, built())
    assert names == {"policy": "Handmade", "sampler": "sage", "reward": "toy_oracle", "credit": "window3"}


def test_the_last_preset_parsed_for_the_built_component_names_it():
    files = [*TOY_FILES, "components/credit/window7.gin", "components/samplers/flow.gin"]
    names = preset_names(files, built(sampler="samplers.sage"))
    assert names["credit"] == "window7"  # window3 and window7 both select credit.window: the later one wins
    assert names["sampler"] == "sage"  # flow.gin came later but selects another sampler


def test_a_component_built_without_its_preset_is_named_by_its_registered_name():
    names = preset_names(TOY_FILES, built(sampler="samplers.flow", credit="credit.uniform"))
    assert names["sampler"] == "flow" and names["credit"] == "uniform"


def test_a_preset_outside_the_checkout_is_named_by_its_file(tmp_path):
    preset = tmp_path / "components" / "rewards" / "my_critic.gin"
    preset.parent.mkdir(parents=True)
    preset.write_text("rewards.toy_oracle.score = 'prob'\nREWARD = @rewards.toy_oracle()\n")
    assert preset_names([*TOY_FILES, str(preset)], built())["reward"] == "my_critic"


def test_preset_names_of_a_parsed_profile(tiny_config):
    """The file list load_config reports (the profile absolute, its includes relative) is understood."""
    names = preset_names(tiny_config.parsed_files, built(credit="credit.uniform"))
    assert names == {"policy": "Handmade", "sampler": "sage", "reward": "toy_oracle", "credit": "uniform"}
    assert preset_names(tiny_config.parsed_files, built())["credit"] == "window3"  # the profile's own preset


@pytest.fixture
def tiny_config():
    return load_config(["components/profiles/toy_v1.gin", "components/credit/uniform.gin"])


def test_component_selector_of_registered_and_unregistered_objects():
    assert component_selector(build("samplers.flow")) == "samplers.flow"
    assert component_selector(build("credit.uniform")) == "credit.uniform"
    assert component_selector(Handmade()) is None


def test_method_of_a_trial():
    uniform, window = build("credit.uniform"), build("credit.window")
    grpo, null = build("objectives.grpo"), build("objectives.null")
    assert method_of("uniform", uniform, 0, grpo) == "base"  # no training steps
    assert method_of("window3", window, 0, null) == "base"
    assert method_of("window3", window, 5, null) == "null"
    assert method_of("uniform", uniform, 5, grpo) == "GRPO"
    assert method_of("my_uniform", uniform, 5, grpo) == "GRPO"  # the component decides, whatever its preset is called
    assert method_of("uniform", window, 5) == "GRPO"  # ... or the preset's name
    assert method_of("window3", window, 5, grpo) == "TVRL"
    assert method_of("window3", window, 5) == "TVRL"


NULL_CONTROLS = ("objectives.null", "objectives.nft_null", "objectives.best_of_n_null", "objectives.tvrl_official_null")


def test_every_registered_router_and_objective_declares_its_method():
    """Uniform credit is GRPO and every other router TVRL; the null controls (of the transition objectives and of
    DiffusionNFT) are null and every other objective leaves the method to the credit."""
    registry.import_components()
    for component in registry.components("credit"):
        expected = "GRPO" if component.qualified_name == "credit.uniform" else "TVRL"
        assert component.target.method == expected, component.qualified_name
    for component in registry.components("objectives"):
        expected = "null" if component.qualified_name in NULL_CONTROLS else None
        assert component.target.method == expected, component.qualified_name


def test_a_router_that_declares_no_method_is_tvrl():
    class Flat(CreditRouter):
        needs_grads = False

        def __call__(self, grads, video, grid, mask=None):
            return torch.ones(video.shape[0], 1, 1, 1)

    class Smoothed(GradientRouter):
        pass

    for router in (Flat(), Smoothed()):
        assert method_of("mine", router, 5) == "TVRL"
        assert method_of("mine", router, 5, build("objectives.null")) == "null"
        assert method_of("uniform", router, 5) == "GRPO"  # its preset's component says more


PRESETS = [(axis, path.stem) for axis, family in (("credit", "credit"), ("objective", "objectives"))
           for path in sorted((PROJECT_ROOT / "components" / family).glob("*.gin"))]


@pytest.mark.parametrize("axis,name", PRESETS, ids=[f"{a}-{n}" for a, n in PRESETS])
def test_every_preset_alone_gives_the_method_of_the_component_it_selects(axis, name):
    """What a trial that failed before building is recorded as: the method its components would have given."""
    family = registry.axes()[axis]
    load_config([f"components/{family}/{name}.gin"])
    selected = gin.query_parameter(f"{registry.FAMILIES[family].macro}/macro.value").selector
    gin.clear_config()
    if axis == "credit":
        assert method_from_presets({"credit": name}, False) == ("GRPO" if selected == "credit.uniform" else "TVRL")
    else:
        null = selected in NULL_CONTROLS
        assert method_from_presets({"objective": name, "credit": "window3"}, False) == ("null" if null else "TVRL")
        assert method_from_presets({"objective": name, "credit": "uniform"}, False) == ("null" if null else "GRPO")
    assert method_from_presets({axis: name}, True) == "base"


def test_run_name_leaves_out_the_toy_policy_and_prefixes_the_study():
    names = {"policy": "toy", "sampler": "sage", "reward": "toy_oracle", "credit": "window3"}
    assert run_name(names, 0) == "sage-toy_oracle-window3-s0"
    assert run_name(names, 2, study="samplers") == "samplers/sage-toy_oracle-window3-s2"
    assert run_name({**names, "policy": "hunyuan_video15_480p"}, 1) == "hunyuan_video15_480p-sage-toy_oracle-window3-s1"


def test_axis_run_name_shortens_paths_to_preset_names():
    labels = {"reward": "C:\\studies\\components\\rewards\\critic.gin", "credit": "components/credit/window3.gin/",
              "sampler": "dance"}
    assert axis_run_name(labels, 4) == "critic-window3-dance-s4"
    assert axis_run_name(labels, 4, base=True) == "base-s4"


def test_presets_in_files_names_the_last_preset_of_each_logged_family():
    files = [*TOY_FILES, "components/credit/uniform.gin", "/elsewhere/components/rewards/broken.gin"]
    assert presets_in_files(files) == {"policy": "toy", "sampler": "sage", "reward": "broken", "credit": "uniform"}
    assert presets_in_files(["components/objectives/grpo.gin", "mine.gin"]) == {}  # objectives are not logged


def test_operative_params_flatten_what_was_used():
    load_config([], ["samplers.flow.a = 0.5", "credit.window.combine = 'max'"])
    build("samplers.flow")
    build("credit.window")
    params = operative_params()
    assert params["samplers.flow.a"] == "0.5"
    assert params["credit.window.combine"] == "'max'"  # strings quoted, as in a gin file
    assert params["credit.window.k"] == "3"  # a default the run used is recorded too
    assert not any(key.startswith("samplers.sage") for key in params)  # bound to nothing that was built
    assert not any(key.startswith("gin.macro") for key in params)


def test_operative_params_respect_mlflow_limits():
    @gin.configurable("limits_probe", module="tests_tracking")
    def probe(text="", **kwargs):
        return text

    long_name = "p" * 250
    gin.bind_parameter("tests_tracking.limits_probe.text", "y" * 7000)
    gin.bind_parameter(f"tests_tracking.limits_probe.{long_name}", 1)
    probe()
    params = operative_params()
    assert long_name in gin.operative_config_str()  # gin recorded it ...
    assert not any(long_name in key for key in params)  # MLflow rejects param keys over 250 characters
    assert params["tests_tracking.limits_probe.text"] == repr("y" * 7000)[:6000]
    assert len(params["tests_tracking.limits_probe.text"]) == 6000


def test_operative_params_of_a_configurable_called_in_several_scopes_keep_the_last_scopes_value():
    """The key has no scope, so one value is logged: the last scope's in gin's order, whatever the call order."""
    load_config([], ["b/credit.window.k = 5", "a/credit.window.k = 7"])
    for scope in ("b", "a", ""):
        with gin.config_scope(scope or None):
            build("credit.window")
    assert operative_params()["credit.window.k"] == "5"


@pytest.mark.parametrize("presets,base,method", [
    ({"credit": "uniform"}, False, "GRPO"), ({"credit": "window3"}, False, "TVRL"),
    ({"credit": "window3", "objective": "null"}, False, "null"), ({"credit": "uniform", "objective": "null"}, False, "null"),
    ({"credit": "window3"}, True, "base"),
])
def test_a_trial_known_only_by_its_presets_gets_the_method_its_components_would_give(presets, base, method):
    """A failed null-control trial is recorded as `null`, not as TVRL, so reports count it in the right row."""
    assert method_from_presets(presets, base) == method
