"""training/trial/checks.py: config-time checks declared by component modules through the registry, so the trial
imports no concrete component (tests/test_layers.py enforces that for all of training/)."""

from __future__ import annotations

import pytest

from tvrl_bench import registry
from tvrl_bench.config import load_config
from tvrl_bench.training.trial.checks import check_values


@pytest.fixture
def no_config_checks(monkeypatch):
    """The declared checks set aside (their modules imported first, so they declare into the real list)."""
    registry.import_components()
    monkeypatch.setattr(registry, "_CONFIG_CHECKS", [])


def test_a_declared_config_check_runs_once_when_a_trial_checks_its_values(no_config_checks):
    seen = []

    @registry.config_check
    def check() -> None:
        seen.append("ran")

    registry.config_check(check)  # declared twice: still run once
    load_config(["components/profiles/toy_v1.gin"])
    check_values()
    assert seen == ["ran"]


def test_a_failing_config_check_stops_the_trial_with_its_error(no_config_checks):
    @registry.config_check
    def refuse() -> None:
        raise ValueError("prompts.csv, line 3: no")

    load_config(["components/profiles/toy_v1.gin"])
    with pytest.raises(ValueError, match="prompts.csv, line 3: no"):
        check_values()


def test_the_prompt_file_check_is_declared_by_its_component_module():
    registry.import_components()
    from tvrl_bench.datasets.files import check_bound_prompt_files

    assert check_bound_prompt_files in registry._CONFIG_CHECKS


def test_a_value_error_of_a_component_the_config_binds_is_a_config_mistake(tiny_policy_path):
    """A value the component's declared checks let through (here: no world check, the checkpoint does not say its
    world) is still named where it was bound, never 'internal error'."""
    from tvrl_bench.config import ConfigError
    from tvrl_bench.training.trial.build import build_settings

    loaded = load_config(["components/profiles/toy.gin"], [f"policies.toy.path = '{tiny_policy_path}'",
                                                           "datasets.toy_slots.min_size = 7"])
    check_values(loaded)
    with pytest.raises(ConfigError, match=r"^--gin_bindings: building datasets.toy_slots: invalid SlotWorld: "
                                          r"min_size=7.*; check the values bound to it: datasets.toy_slots.min_size "
                                          r"\(--gin_bindings\)"):
        build_settings(loaded)
