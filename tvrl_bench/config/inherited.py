"""Bindings a component takes from the component it varies: a null control from its objective.

A registered class that sets `INHERITS_BINDINGS = True` (objectives.advantages.PermutedAdvantages: every null
control) is the nearest registered class it derives from, with one change, and takes that component's values.
When a config is loaded and refers to such a component (`OBJECTIVE = @objectives.nft_null()`), each of its
base's parameters that it does not bind itself (`objectives.nft_null.beta`) is bound for it to the base's value:
the one the config binds (`objectives.nft.beta = 2.0`, in each scope it is bound in), else the base's default. So
a study that tunes an objective tunes its null control as well, the run's params show every value the control ran
with, and the config checks see them (config/component_checks.py reports a problem with an inherited value once,
as the base's, where it was bound). A binding of the component's own wins over its base's.
"""

from __future__ import annotations

import inspect

import gin

from tvrl_bench import registry

__all__ = ["INHERITS", "base_of", "inherit_bindings"]

INHERITS = "INHERITS_BINDINGS"


def base_of(qualified: str) -> str | None:
    """The registered name of the component `qualified` takes its bindings from, or None when it takes none."""
    target = registry.get(qualified).target
    if not inspect.isclass(target) or not getattr(target, INHERITS, False):
        return None
    by_class = {c.target: c.qualified_name for c in registry.components() if inspect.isclass(c.target)}
    return next((by_class[k] for k in target.__mro__[1:] if k in by_class), None)


def inherit_bindings(referred: set[str]) -> dict[tuple[str, str, str], str]:
    """Bind, for every inheriting component among `referred` (the components the parsed config refers to), its
    base's parameters that it does not bind itself (see the module); returns {(scope, component, parameter): base}
    of each binding made."""
    made = {}
    for qualified in sorted(referred):
        base = base_of(qualified)
        if base is None:
            continue
        accepted = {name for name, _ in registry.get(qualified).parameters()}
        defaults = {name: value for name, value in registry.get(base).parameters()
                    if name in accepted and value is not inspect.Parameter.empty and _literal(value)}
        scopes = {scope for scope, selector in gin.config._CONFIG if selector == base} | {""}
        for scope in sorted(scopes):
            values = {**(defaults if not scope else {}), **gin.config._CONFIG.get((scope, base), {})}
            own = gin.config._CONFIG.get((scope, qualified), {})
            for param, value in values.items():
                if param in accepted and param not in own:
                    gin.bind_parameter((scope, qualified, param), value)
                    made[(scope, qualified, param)] = base
    return made


def _literal(value: object) -> bool:
    """Whether gin writes `value` as a literal that parses back (a default such as an object is left unbound)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_literal(v) for v in value)
    return isinstance(value, dict) and all(_literal(k) and _literal(v) for k, v in value.items())
