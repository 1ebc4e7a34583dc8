"""What a trial run is called and which params it carries (docs/report.md).

The preset of each axis (policy, sampler, reward, credit) is the last `components/<family>/<name>.gin` file
parsed whose component is the one actually built; a component configured without a preset is named by its
registered name. Every operative gin parameter is flattened into params as `<selector>.<param>`.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from tvrl_bench import registry
from tvrl_bench.config.operative import MACRO, operative_bindings

_PRESET = re.compile(r"components/(?P<family>\w+)/(?P<name>[\w.-]+)\.gin$")
_MACRO = re.compile(r"^\s*(?P<macro>[A-Z_]+)\s*=\s*@(?P<selector>[\w.]+)\(\)", re.MULTILINE)


def preset_names(parsed_files: list[str], built: dict[str, Any]) -> dict[str, str]:
    """{axis: preset name} for policy, sampler, reward, credit; `built` maps axis -> the component object."""
    names = {}
    for axis, family in registry.logged_axes().items():
        selector = component_selector(built[axis])
        chosen = None
        for path in parsed_files:
            m = _PRESET.search(path.replace("\\", "/"))
            if m and m.group("family") == family and _preset_selects(path, selector):
                chosen = m.group("name")
        names[axis] = chosen or (selector.split(".", 1)[1] if selector else type(built[axis]).__name__)
    return names


def profile_name(parsed_files: list[str]) -> str:
    """The trial's profile, the first parsed file under a `profiles/` folder, by its name ('toy', 'toy_v3',
    'paper'); 'none' for a trial configured without one. Logged as the `profile` param, so a table never averages
    runs of two profiles as one seed."""
    for path in parsed_files:
        parts = path.replace("\\", "/").split("/")
        if len(parts) >= 2 and parts[-2] == "profiles" and parts[-1].endswith(".gin"):
            return parts[-1][: -len(".gin")]
    return "none"


def component_selector(obj: Any) -> str | None:
    """The registered `<family>.<name>` of a built component (None for an unregistered object)."""
    for component in registry.components():
        if type(obj) is component.target:
            return component.qualified_name
    return None


def _preset_selects(path: str, selector: str | None) -> bool:
    from tvrl_bench.config import ConfigError, resolve

    try:
        text = resolve(path).read_text()
    except (ConfigError, OSError):
        return False
    return any(m.group("selector") == selector for m in _MACRO.finditer(text))


def method_of(credit_preset: str, credit: Any, steps: int, objective: Any = None) -> str:
    """'base' without training steps, else the method the components declare (`METHOD_AXES`): the objective's
    (`null` for the null control), else the credit router's ('GRPO' for uniform credit, 'TVRL' for any other). A
    router's label is its class's, or that of the component its preset selects when only that one declares its
    own (a router whose class is unknown here, or a preset whose name says more)."""
    candidates = {"objective": [objective], "credit": [credit, _preset_component("credit", credit_preset)]}
    return _declared_method(candidates, base=steps == 0)


def run_name(names: dict[str, str], seed: int, study: str | None = None) -> str:
    """`[<study>/][<policy>-]<sampler>-<reward>-<credit>-s<seed>` (the policy only when it is not the toy)."""
    parts = [names["sampler"], names["reward"], names["credit"]]
    if names["policy"] != "toy":
        parts.insert(0, names["policy"])
    base = "-".join(parts) + f"-s{seed}"
    return f"{study}/{base}" if study else base


def axis_run_name(labels: dict[str, str], seed: int, base: bool = False) -> str:
    """A study trial's name: its axis values in the study's axis order and its seed, `sage-window3-s0`
    (`base-s0` for an untrained base row), so runs of a study compare without opening them."""
    values = ["base"] if base else [_short(v) for v in labels.values()]
    return "-".join(values + [f"s{seed}"])


def _short(value: str) -> str:
    """A preset name from an axis value that may be a path (`components/rewards/toy_oracle.gin` -> toy_oracle)."""
    value = value.replace("\\", "/").rstrip("/")
    name = value.rsplit("/", 1)[-1]
    return name[: -len(".gin")] if name.endswith(".gin") else name


def method_from_presets(presets: dict[str, str], base: bool) -> str:
    """The `method` of a trial from its preset names alone (axis -> name), for a trial that failed before its
    components were built: the method each preset's component (`components/<family>/<name>.gin`) declares, by the
    rule of `method_of`."""
    candidates = {axis: [_preset_component(axis, presets.get(axis))] for axis in METHOD_AXES}
    return _declared_method(candidates, base)


# The axes whose components declare a trial's method (class attribute `method`), the first declaring one wins.
METHOD_AXES = ("objective", "credit")
_INCLUDE = re.compile(r"^\s*include\s+['\"](?P<path>[^'\"]+)['\"]", re.MULTILINE)


def _declared_method(candidates: dict[str, list[Any]], base: bool) -> str:
    """'base', or along METHOD_AXES the first axis's label: the first of its candidates (components or classes)
    that declares one other than its family contract's default, else that default (None: the next axis)."""
    if base:
        return "base"
    for axis in METHOD_AXES:
        default = registry.FAMILIES[registry.axes()[axis]].contract_class().method
        declared = [getattr(c, "method", None) for c in candidates.get(axis, []) if c is not None]
        label = next((m for m in declared if m is not None and m != default), default)
        if label is not None:
            return label
    raise ValueError(f"no component of {METHOD_AXES} declares a method")


def _preset_component(axis: str, name: str | None) -> type | None:
    """The class of the registered component that preset `components/<family>/<name>.gin` of `axis` binds to its
    family's macro (following the preset's includes); None when there is no such preset or component."""
    family = registry.axes().get(axis)
    if not name or family is None:
        return None
    selector = _macro_selector(f"components/{family}/{name}.gin", registry.FAMILIES[family].macro)
    if selector is None:
        return None
    if selector not in registry.registered_names():  # a trial that failed before building imported no component
        for module in registry.component_modules():
            if module.startswith(registry.FAMILIES[family].package + "."):
                importlib.import_module(module)
    try:
        return registry.get(selector).target
    except registry.RegistryError:
        return None


def _macro_selector(path: str, macro: str | None, seen: frozenset[str] = frozenset()) -> str | None:
    """The `<family>.<name>` a config file binds to `macro` (`MACRO = @family.name()`), its own binding or else
    that of its last include that binds it; None when it binds none (or cannot be read)."""
    from tvrl_bench.config import ConfigError, resolve

    try:
        text = resolve(path).read_text()
    except (ConfigError, OSError):
        return None
    own = [m.group("selector") for m in _MACRO.finditer(text) if m.group("macro") == macro]
    if own:
        return own[-1]
    for include in reversed([m.group("path") for m in _INCLUDE.finditer(text)]):
        if include not in seen:
            selector = _macro_selector(include, macro, seen | {path})
            if selector is not None:
                return selector
    return None


def presets_in_files(parsed_files: list[str], axes: dict[str, str] | None = None) -> dict[str, str]:
    """{axis: preset} from the file names alone (the last `components/<family>/<name>.gin` parsed per family),
    for a trial whose components could not be built; `axes` (axis -> family) defaults to the logged ones."""
    names = {}
    for path in parsed_files:
        m = _PRESET.search(path.replace("\\", "/"))
        if m:
            for axis, family in (axes or registry.logged_axes()).items():
                if m.group("family") == family:
                    names[axis] = m.group("name")
    return names


def operative_params() -> dict[str, str]:
    """Every operative gin parameter as `<selector>.<param>` -> string (MLflow limits applied).

    Keys carry no scope: a configurable called in several scopes (`@train/datasets.file()` and
    `@eval/datasets.file()`) logs the value of the last scope in the operative config's order (gin's: unscoped
    first, then by scope name).
    """
    params = {}
    for binding in operative_bindings():
        if binding.selector == MACRO:
            continue
        key = f"{binding.selector}.{binding.param}"
        if len(key) <= 250:
            params[key] = _format(binding.value)[:6000]
    return params


def _format(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)
