"""A null control is its objective with the advantages permuted: the objective's bindings reach it, by one rule for
every null control (tvrl_bench/config/inherited.py)."""

from __future__ import annotations

import inspect
from pathlib import Path

import gin
import pytest

from tvrl_bench import registry
from tvrl_bench.config import ConfigError, load_config
from tvrl_bench.config.inherited import INHERITS, base_of
from tvrl_bench.tracking.params import operative_params

# Every null-control preset and its objective's preset (whose values the control runs).
NULL_PRESETS = {"nft_null.gin": "nft.gin", "null.gin": "grpo.gin", "null_within_groups.gin": "grpo.gin",
                "best_of_n_null.gin": "best_of_n.gin", "tvrl_official_null.gin": "tvrl_official.gin",
                "tvrl_question_null.gin": "tvrl_question.gin"}
OBJECTIVES = Path(__file__).resolve().parents[2] / "components" / "objectives"
# A parameter of each objective that the test binds to a value other than its default.
PROBE = {"objectives.tvrl_official": ("refresh_every", 7)}


def null_controls() -> dict[str, str]:
    registry.import_components()
    return {c.qualified_name: base_of(c.qualified_name) for c in registry.components()
            if inspect.isclass(c.target) and getattr(c.target, INHERITS, False)}


def test_every_null_control_takes_its_objectives_bindings():
    assert null_controls() == {"objectives.nft_null": "objectives.nft", "objectives.null": "objectives.grpo",
                               "objectives.best_of_n_null": "objectives.best_of_n",
                               "objectives.tvrl_official_null": "objectives.tvrl_official"}
    for null, base in null_controls().items():
        probe, value = PROBE.get(base, ("kl_beta", 0.25))
        load_config([], [f"OBJECTIVE = @{null}()", f"{base}.{probe} = {value}"])
        assert gin.query_parameter(f"{null}.{probe}") == value, null
        own = [name for name, _ in registry.get(null).parameters()]
        for name, default in registry.get(base).parameters():  # the rest: the objective's defaults
            if name != probe:
                assert name in own and gin.query_parameter(f"{null}.{name}") == default, (null, name)


def test_the_objectives_binding_reaches_the_control_and_the_runs_params_show_it():
    load_config(["components/profiles/toy.gin", "components/objectives/nft_null.gin"], ["objectives.nft.beta = 2.0"])
    objective = registry.build("OBJECTIVE")
    assert type(objective).__name__ == "NegativeAwareFineTuningNull" and objective.beta == 2.0
    assert operative_params()["objectives.nft_null.beta"] == "2.0"
    load_config(["components/profiles/toy.gin", "components/objectives/nft_null.gin"],
                ["objectives.nft.beta = 2.0", "objectives.nft_null.beta = 3.0"])  # its own binding wins
    assert registry.build("OBJECTIVE").beta == 3.0
    load_config(["components/profiles/toy.gin"], ["objectives.nft.beta = 2.0"])  # no null control: nothing added
    assert ("", "objectives.nft_null") not in gin.config._CONFIG


def test_every_null_preset_is_listed():
    presets = {p.name for p in OBJECTIVES.glob("*.gin") if "null" in p.stem}
    assert presets == set(NULL_PRESETS)


def _statements(preset: str) -> list[str]:
    lines = (OBJECTIVES / preset).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("preset", sorted(NULL_PRESETS))
def test_a_null_preset_takes_its_objectives_values_one_way(preset):
    """The one way: the rule carries the objective's values to the control. A null preset restates none of them and
    includes nothing but its objective's own preset (the values it controls); it binds the control's own
    `within_groups` and refers to the control."""
    objective = NULL_PRESETS[preset]
    load_config([f"components/objectives/{preset}"])
    null = gin.query_parameter("OBJECTIVE/macro.value").selector
    assert base_of(null) is not None, f"{preset}: {null} takes no bindings from an objective"
    for line in _statements(preset):
        if line.startswith("include "):
            assert line == f"include 'components/objectives/{objective}'", f"{preset}: {line}"
        else:
            assert line in (f"{null}.within_groups = True", f"OBJECTIVE = @{null}()"), f"{preset}: {line}"


@pytest.mark.parametrize("preset", sorted(NULL_PRESETS))
def test_a_null_preset_alone_runs_its_objective_presets_values(preset):
    objective_preset = NULL_PRESETS[preset]
    load_config([f"components/objectives/{preset}"])
    null = gin.query_parameter("OBJECTIVE/macro.value").selector
    load_config([f"components/objectives/{objective_preset}"])
    base = base_of(null)

    def value(configurable: str, name: str, default):  # bound, else the registered default
        try:
            return gin.query_parameter(f"{configurable}.{name}")
        except ValueError:
            return default

    expected = {name: value(base, name, default) for name, default in registry.get(base).parameters()}
    load_config([f"components/objectives/{preset}"])
    assert {name: value(null, name, expected[name]) for name in expected} == expected


def test_a_bad_inherited_value_is_one_line_where_it_was_bound():
    with pytest.raises(ConfigError) as refused:
        load_config(["components/profiles/toy.gin", "components/objectives/nft_null.gin"],
                    ["objectives.nft.timestep_range = (0.95, 1.0)"])
    (line,) = str(refused.value).splitlines()
    assert line.startswith("--gin_bindings: objectives.nft.timestep_range = (0.95, 1.0) holds none of the schedule's")
