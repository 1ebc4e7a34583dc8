"""Every component's declared checks (config/rules.py) run on the parsed config, before anything is built.

A component is checked when the config binds one of its parameters (its rules: the bound values) or refers to it
(`OBJECTIVE = @objectives.nft()`: its rules on every value, defaults included, and its relations, which may read
other components' values, e.g. `training.trial.group_size`). `training.*` components are built by every trial
and checked as referred to, and so is the base of a null control referred to (config/inherited.py): a value the
control inherited is checked once, as its base's. A refused value is one line naming the file and line (or
`--gin_bindings`) that bound it; a relation's warning is logged once per process.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

import gin

from tvrl_bench import registry
from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.inherited import base_of
from tvrl_bench.config.paths import shipped_preset
from tvrl_bench.config.rules import Unknown, Values, declared_checks
from tvrl_bench.config.statements import LoadedConfig, locate
from tvrl_bench.config.values import references

log = logging.getLogger("tvrl_bench.config")

_MACRO = ("gin.macro", "macro")
_WARNED: set[str] = set()
_ALWAYS_BUILT = ("training.trial", "training.schedule", "training.optimizer")


def qualified_name(selector: str, names: set[str]) -> str | None:
    if selector in names:
        return selector
    return next((n for n in sorted(names) if n.endswith("." + selector)), None)


def _references(value: Any):
    """Selectors of every `@component` inside a bound value."""
    for reference in references(value):
        if reference.selector not in _MACRO:
            yield reference.selector


def resolved(value: Any) -> Any:
    """A bound value with `%MACRO` replaced by the macro's value; Unknown for a reference to a component."""
    if isinstance(value, gin.config.ConfigurableReference):
        if value.selector in _MACRO:
            name = value.scoped_selector.rsplit("/", 1)[0]
            try:
                return resolved(gin.query_parameter(f"{name}/macro.value"))
            except ValueError:
                raise Unknown(name) from None
        raise Unknown(value.selector)
    return value


class _Own(dict):
    """A component's values: what the config binds, else its constructor's defaults; references are Unknown."""

    def __init__(self, bound: dict[str, Any], defaults: dict[str, Any]):
        super().__init__({**defaults, **bound})

    def __getitem__(self, key: str) -> Any:
        return resolved(super().__getitem__(key))


def default_values(target: Any) -> dict[str, Any]:
    fn = target.__init__ if inspect.isclass(target) else target
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty and p.name != "self"}


def bound_values(qualified: str, names: set[str]) -> dict[str, Any]:
    """What the config binds to `qualified` (unscoped, or in any scope: the last one wins)."""
    found: dict[str, Any] = {}
    for (scope, selector), values in gin.config._CONFIG.items():
        if qualified_name(selector, names) == qualified:
            found.update(values)
    return found


def _outside(names: set[str]):
    def value(key: str) -> Any:
        selector, param = key.rsplit(".", 1)
        qualified = qualified_name(selector, names)
        if qualified is None:
            raise Unknown(key)
        bound = bound_values(qualified, names)
        if param in bound:
            return resolved(bound[param])
        defaults = default_values(registry.get(qualified).target)
        if param not in defaults:
            raise Unknown(key)
        return defaults[param]
    return value


def _defaults(qualified: str, names: set[str]):
    """A relation's `v.default(key)`: the constructor default of this component's parameter or another's."""
    def default(key: str) -> Any:
        selector, param = key.rsplit(".", 1) if "." in key else (qualified, key)
        owner = qualified_name(selector, names)
        found = default_values(registry.get(owner).target) if owner is not None else {}
        if param not in found:
            raise Unknown(key)
        return found[param]
    return default


def checked_components(bases: bool = True) -> tuple[set[str], set[str]]:
    """(components whose parameters the config binds, components it refers to or every trial builds, and, with
    `bases`, the base of each null control among them)."""
    names = set(registry.registered_names())
    bound, referred = set(), set()
    for (scope, selector), values in gin.config._CONFIG.items():
        if (qualified := qualified_name(selector, names)) is not None:
            bound.add(qualified)
        for value in values.values():
            for reference in _references(value):
                if (qualified := qualified_name(reference, names)) is not None:
                    referred.add(qualified)
    if "training.trial" in bound:
        referred |= {n for n in _ALWAYS_BUILT if n in names}
    if bases:
        referred |= {base for base in map(base_of, referred) if base is not None}
    return bound, referred


def component_problems(loaded: LoadedConfig | None = None) -> tuple[list[str], list[str]]:
    """(refused lines, warning lines), each prefixed with where its value was bound."""
    names = set(registry.registered_names())
    bound, referred = checked_components()
    only_bases = referred - checked_components(bases=False)[1]  # checked for what their null controls inherit
    errors, warnings = [], []
    for qualified in sorted(bound | referred):
        target = registry.get(qualified).target
        checks = declared_checks(target)
        if checks is None:
            continue
        given = bound_values(qualified, names)
        own = _Own(given, default_values(target) if qualified in referred else {})
        inherited = {param for (_, component, param) in (loaded.inherited if loaded else {}) if component == qualified}
        values = Values(qualified, own, _outside(names), _defaults(qualified, names))
        for problem in checks.problems(qualified, values, relations=qualified in referred):
            own_params = {p for p in problem.params if "." not in p}
            if own_params and own_params <= inherited:
                continue  # reported as its base's, where the value was bound
            if not own_params and qualified in only_bases:
                continue  # reads none of the base's values: the null control, not built here, judges it itself
            at_fault = where_bound(loaded, qualified, problem.params[:1]) if problem.named else None
            if at_fault is not None and shipped_preset(at_fault):
                continue  # a shipped preset's value for another mode (a profile's, carried into a swapped mode)
            where = at_fault or where_bound(loaded, qualified, problem.params)
            line = f"{where}: {problem.message}" if where else problem.message
            (warnings if problem.warn else errors).append(line)
    return errors, warnings


def where_bound(loaded: LoadedConfig | None, qualified: str, params: tuple[str, ...]) -> str | None:
    """Where the user bound one of `params` (`preferred_place`); among equals the first of `params` (a relation
    lists its subject first)."""
    found = []
    for param in params:
        selector, name = param.rsplit(".", 1) if "." in param else (qualified, param)
        if (place := locate(loaded, selector, name)) is not None:
            found.append(place)
    return preferred_place(loaded, found)


def preferred_place(loaded: LoadedConfig | None, places: list[str | None]) -> str | None:
    """Of the places settings were bound, the user's: the command line first, then the user's own files (not an
    included preset), then any file; among equals the first."""
    own = {b.origin for b in loaded.top_level} if loaded is not None else set()
    for wanted in (lambda p: p == "--gin_bindings", lambda p: p in own, lambda p: True):
        if chosen := next((p for p in places if p and wanted(p)), None):
            return chosen
    return None


def check_components(loaded: LoadedConfig | None = None) -> None:
    """ConfigError listing every value a component's declared checks refuse; warnings logged once each."""
    errors, warnings = component_problems(loaded)
    for line in warnings:
        if line not in _WARNED:
            _WARNED.add(line)
            log.warning("%s", line)
    if errors:
        raise ConfigError("\n".join(dict.fromkeys(errors)))
