"""Registration: module-qualified names, duplicates named with both places, listing."""

from __future__ import annotations

import pytest

from tvrl_bench import registry


def test_components_are_registered_under_module_qualified_names():
    registry.import_components()
    names = registry.registered_names()
    for name in ["samplers.flow", "samplers.dance", "samplers.sage", "samplers.cps", "samplers.ode",
                 "credit.uniform", "credit.frame", "credit.window", "credit.shuffled", "credit.feature_map",
                 "objectives.grpo", "objectives.per_token", "training.schedule"]:
        assert name in names
    flow = registry.get("samplers.flow")
    assert flow.family == "samplers" and ("a", 0.7) in flow.parameters()
    assert flow.description.startswith("Flow-GRPO SDE")


def test_registering_a_name_twice_names_both_places():
    registry.import_components()

    class Impostor:
        """Another flow."""

    with pytest.raises(registry.RegistryError) as err:
        registry.register("samplers", "flow")(Impostor)
    message = str(err.value)
    assert "samplers.flow" in message and "registered twice" in message
    assert "tvrl_bench/samplers/flow.py:" in message and "test_registry.py:" in message
    assert "FlowSampler" in message and "Impostor" in message


def test_unknown_family_and_name_suggest_the_closest():
    registry.import_components()
    with pytest.raises(registry.RegistryError, match="did you mean 'samplers'"):
        registry.register("sampler", "x")
    with pytest.raises(registry.RegistryError, match="did you mean 'samplers.sage'"):
        registry.get("samplers.sag")


def test_every_component_lives_in_the_folder_named_after_its_family():
    """One folder per family: a reader looks for `rewards.toy_oracle` under tvrl_bench/rewards/."""
    registry.import_components()
    misplaced = []
    for component in registry.components():
        folder = registry.FAMILIES[component.family].package.replace(".", "/") + "/"
        if folder not in component.source.replace("\\", "/"):
            misplaced.append(f"{component.qualified_name} at {component.source}")
    assert not misplaced, misplaced


def test_discovery_finds_every_registering_module_and_nothing_is_listed_by_hand(tmp_path, monkeypatch):
    """A new module with `@register(` in a family's folder is imported without being named anywhere."""
    import ast
    from pathlib import Path

    import tvrl_bench

    root = Path(tvrl_bench.__file__).parent
    registering = set()
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            decorators = getattr(node, "decorator_list", [])
            if any(isinstance(d, ast.Call) and getattr(d.func, "id", getattr(d.func, "attr", "")) == "register"
                   for d in decorators):
                registering.add(".".join(("tvrl_bench", *path.relative_to(root).with_suffix("").parts)))
    assert registering == set(registry.component_modules())


def test_build_makes_the_component_a_macro_binds_and_names_the_preset_when_none_is():
    import gin

    registry.import_components()
    gin.clear_config()
    gin.parse_config("SAMPLER = @samplers.flow()\nsamplers.flow.a = 0.5")
    sampler = registry.build("SAMPLER")
    assert type(sampler).__name__ == "FlowSampler" and sampler.a == 0.5
    with pytest.raises(registry.RegistryError, match="nothing is bound to REWARD: include components/rewards/<name>.gin"):
        registry.build("REWARD")
    gin.clear_config()


def test_families_declare_axes_params_and_contracts_once():
    assert registry.axes() == {"policy": "policies", "sampler": "samplers", "reward": "rewards", "credit": "credit",
                               "objective": "objectives", "evaluator": "evaluators", "dataset": "datasets"}
    assert registry.logged_axes() == {"policy": "policies", "sampler": "samplers", "reward": "rewards",
                                      "credit": "credit"}
    for family in registry.FAMILIES.values():
        contract = family.contract_class()
        if family.axis:
            assert contract is not None, family.name
        for component in registry.components(family.name) if contract is not None and family.name != "datasets" else []:
            assert issubclass(component.target, contract), component.qualified_name
