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
