"""Config loading: search paths, and errors that name the file, the line and the closest names."""

from __future__ import annotations

import gin
import pytest

from tvrl_bench import registry
from tvrl_bench.config import ConfigError, check_unused, load_config, resolve


def write(path, text):
    path.write_text(text)
    return str(path)


def test_presets_load_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    user = write(tmp_path / "mine.gin", "include 'components/samplers/sage.gin'\nsamplers.sage.eta = 0.25\n")
    load_config([user])
    sampler = registry.build("SAMPLER")
    assert type(sampler).__name__ == "SageSampler" and sampler.eta == 0.25


def test_command_line_bindings_override_files(tmp_path):
    load_config(["components/samplers/flow.gin"], ["samplers.flow.a = 0.9"])
    assert gin.query_parameter("samplers.flow.a") == 0.9


def test_unknown_component_names_file_line_and_suggestion(tmp_path):
    path = write(tmp_path / "bad.gin", "samplers.sage.eta = 0.5\nSAMPLER = @samplers.sagee()\n")
    with pytest.raises(ConfigError) as err:
        load_config([path])
    message = str(err.value)
    assert f"{path}:2" in message and "'samplers.sagee'" in message and "did you mean 'samplers.sage'" in message


def test_unknown_configurable_in_a_binding(tmp_path):
    path = write(tmp_path / "bad.gin", "\n\ncredit.windw.k = 3\n")
    with pytest.raises(ConfigError, match=r"bad.gin:3: unknown component .*'credit.windw'.*did you mean 'credit.window'"):
        load_config([path])


def test_misspelled_parameter_suggests_the_real_one(tmp_path):
    path = write(tmp_path / "bad.gin", "samplers.sage.etta = 0.5\n")
    with pytest.raises(ConfigError, match=r"bad.gin:1: 'samplers.sage' has no parameter 'etta'; did you mean 'eta'"):
        load_config([path])


def test_error_inside_an_included_file_names_that_file(tmp_path):
    inner = write(tmp_path / "inner.gin", "# comment\nsamplers.flow.aa = 1\n")
    outer = write(tmp_path / "outer.gin", f"include '{inner}'\n")
    with pytest.raises(ConfigError, match=r"inner.gin:2: 'samplers.flow' has no parameter 'aa'; did you mean 'a'"):
        load_config([outer])


def test_bad_command_line_binding_is_named():
    with pytest.raises(ConfigError, match=r"--gin_bindings 'samplers.flow.eta=1'.*no parameter 'eta'"):
        load_config([], ["samplers.flow.eta=1"])


def test_missing_include_and_missing_file(tmp_path):
    path = write(tmp_path / "top.gin", "include 'components/samplers/sagge.gin'\n")
    with pytest.raises(ConfigError, match=r"top.gin:1: included file 'components/samplers/sagge.gin' not found"):
        load_config([path])
    with pytest.raises(ConfigError, match="config file not found: nowhere.gin"):
        resolve("nowhere.gin")


def test_syntax_error_names_file_and_line(tmp_path):
    path = write(tmp_path / "bad.gin", "samplers.flow.a = 0.5\nsamplers.flow.a = = 2\n")
    with pytest.raises(ConfigError, match=r"bad.gin:2: gin syntax error"):
        load_config([path])


def test_binding_that_nothing_uses_is_an_error_after_the_run_builds(tmp_path):
    path = write(
        tmp_path / "trial.gin",
        "include 'components/samplers/sage.gin'\nsamplers.dance.eta = 0.1\n",
    )
    loaded = load_config([path])
    registry.build("SAMPLER")  # what a trial does: build the sampler
    with pytest.raises(ConfigError) as err:
        check_unused(loaded)
    message = str(err.value)
    assert f"{path}:2" in message and "samplers.dance.eta" in message and "samplers.sage" in message


def test_presets_swapped_out_by_a_later_file_are_not_unused(tmp_path):
    path = write(tmp_path / "trial.gin", "include 'components/samplers/sage.gin'\ninclude 'components/samplers/flow.gin'\n")
    loaded = load_config([path])
    sampler = registry.build("SAMPLER")
    assert type(sampler).__name__ == "FlowSampler"  # the later include won
    # sage's own bindings came from an included preset, so they are allowed; the same file with a stray top-level
    # binding for the swapped-out sampler is not (the contrast shows check_unused is looking at this config)
    assert check_unused(loaded) is None
    gin.clear_config()
    stray = write(tmp_path / "stray.gin", open(path).read() + "samplers.sage.eta = 0.2\n")
    loaded = load_config([stray])
    registry.build("SAMPLER")
    with pytest.raises(ConfigError, match="samplers.sage.eta"):
        check_unused(loaded)


def test_config_text_reparses_to_the_same_config(tmp_path):
    loaded = load_config(["components/samplers/dance.gin"], ["samplers.dance.eta = 0.4"])
    first = gin.config_str()
    gin.clear_config()
    gin.parse_config(loaded.config_text())
    assert gin.config_str() == first


def test_operative_bindings_complete_selectors_and_keep_values_and_macros():
    from tvrl_bench.config.operative import MACRO, OperativeBinding, operative_bindings

    load_config([], ["STEPS = 7", "samplers.flow.a = %STEPS", "credit.window.combine = 'max'"])
    registry.get("samplers.flow").target()
    registry.get("credit.window").target()
    found = operative_bindings()
    assert OperativeBinding("STEPS", MACRO, "value", 7) in found  # a macro: its name is the scope
    values = {(b.selector, b.param): b.value for b in found}
    assert values[("credit.window", "combine")] == "max" and values[("credit.window", "k")] == 3
    assert str(values[("samplers.flow", "a")]) == "%STEPS"  # the reference, as gin recorded it
    assert not any(b.selector.startswith("samplers.sage") for b in found)  # bound, but nothing built it


@gin.configurable("no_parameters", module="tests_config")
def no_parameters():
    """A configurable without parameters: gin records its call with a header only."""


def test_called_configurables_include_scoped_ones_and_those_without_parameters():
    from tvrl_bench.config.operative import MACRO, called_configurables

    load_config([], ["STEPS = 7", "samplers.flow.a = %STEPS"])
    registry.get("samplers.flow").target()
    no_parameters()
    with gin.config_scope("inner"):
        no_parameters()
    assert sorted(called_configurables()) == [
        ("", "samplers.flow"), ("", "tests_config.no_parameters"), ("STEPS", MACRO),
        ("inner", "tests_config.no_parameters"),
    ]


def test_a_binding_its_caller_overrode_still_counts_as_used(tmp_path):
    """Used means the component was built (gin leaves the overridden value out of the operative config)."""
    import inspect

    flow = registry.get("samplers.flow").target
    loaded = load_config([write(tmp_path / "trial.gin", "samplers.flow.a = 0.5\n")])
    flow(**{name: p.default for name, p in inspect.signature(flow).parameters.items()})  # every value by the caller
    assert "# None." in gin.operative_config_str()
    assert check_unused(loaded) is None


def test_operative_bindings_skip_the_configs_import_statements(tmp_path):
    from tvrl_bench.config.operative import operative_bindings

    load_config([write(tmp_path / "trial.gin", "import json\ncredit.window.k = 5\n")])
    registry.get("credit.window").target()
    assert gin.operative_config_str().startswith("import json")
    assert ("credit.window", "k", 5) in [(b.selector, b.param, b.value) for b in operative_bindings()]


def test_every_component_default_is_a_gin_literal():
    """`operative_bindings` reads the operative config back from gin's text, which leaves out a value it cannot
    write as a literal: every default of a component must be one, or its operative param would go missing."""
    import inspect

    registry.import_components()
    found = []
    for component in registry.components():
        fn = component.target.__init__ if inspect.isclass(component.target) else component.target
        for name, p in inspect.signature(fn).parameters.items():
            if p.default is inspect.Parameter.empty:
                continue
            try:
                literal = gin.config.parse_value(repr(p.default)) == p.default
            except SyntaxError:
                literal = False
            if not literal or isinstance(p.default, (dict, set, frozenset)):  # their text is sorted
                found.append(f"{component.qualified_name}.{name} = {p.default!r}")
    assert not found, found
