"""The components a parsed config's trial builds, read from the config alone (nothing is built).

`trial_components()` lists each trial family's component (`training.trial.<axis>` when the config binds it to a
component, else the family's macro, e.g. `REWARD = @rewards.toy_oracle()`), then, depth first, the components
their bound values refer to (a combined critic's critics, a paired dataset's sets, a verdict critic's evaluator).
A binding left behind by a swapped preset (a combined critic's `critics` after `REWARD` was rebound) is not
listed: only what the trial reaches is. `configured_values(qualified)` is a component's values as the config
gives them: its bindings over its constructor's defaults, `%MACRO`s resolved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gin

from tvrl_bench import registry
from tvrl_bench.config.component_checks import bound_values, default_values, qualified_name
from tvrl_bench.config.values import references

_MACRO = ("gin.macro", "macro")


@dataclass(frozen=True)
class TrialComponent:
    """One component the trial builds: the trial's axis it serves ('reward', a nested critic's too) and its
    registered name ('rewards.toy_oracle')."""

    axis: str
    qualified: str

    @property
    def target(self) -> Any:
        return registry.get(self.qualified).target


def _macro_value(name: str) -> Any:
    try:
        return gin.query_parameter(f"{name}/macro.value")
    except ValueError:
        return None


def _components_in(value: Any, names: set[str]) -> list[str]:
    """Registered names of the components a bound value refers to, `%MACRO`s followed."""
    found = []
    for reference in references(value):
        if reference.selector in _MACRO:
            found += _components_in(_macro_value(reference.scoped_selector.rsplit("/", 1)[0]), names)
        elif (qualified := qualified_name(reference.selector, names)) is not None:
            found.append(qualified)
    return found


def configured_values(qualified: str) -> dict[str, Any]:
    """A component's values in the parsed config: bound ones over its constructor's defaults, macros resolved
    (a reference to a component stays a gin reference)."""
    names = set(registry.registered_names())
    values = {**default_values(registry.get(qualified).target), **bound_values(qualified, names)}
    for key, value in values.items():
        if isinstance(value, gin.config.ConfigurableReference) and value.selector in _MACRO:
            values[key] = _macro_value(value.scoped_selector.rsplit("/", 1)[0])
    return values


def trial_components() -> list[TrialComponent]:
    """Every component the parsed config's trial builds (see the module docstring), once per axis, in axis order."""
    names = set(registry.registered_names())
    trial = bound_values("training.trial", names) if "training.trial" in names else {}
    found: list[TrialComponent] = []
    seen: set[tuple[str, str]] = set()

    def visit(axis: str, qualified: str) -> None:
        if (axis, qualified) in seen:
            return
        seen.add((axis, qualified))
        found.append(TrialComponent(axis, qualified))
        for value in bound_values(qualified, names).values():
            for nested in _components_in(value, names):
                visit(axis, nested)

    for family in registry.trial_families():
        value = trial.get(family.axis)
        value = value if value is not None else _macro_value(family.macro)
        for qualified in _components_in(value, names)[:1]:
            visit(family.axis, qualified)
    return found
