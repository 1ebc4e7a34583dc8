"""Bound literal values checked against the components' signatures, and names that become folder names."""

from __future__ import annotations

import inspect
import re

import gin

from tvrl_bench import registry
from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.statements import LoadedConfig, locate

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$")


def check_safe_name(value: object, what: str, where: str = "") -> str:
    """`value` if it can name a folder (letters, digits, `.`, `_`, `+`, `-`; no `..`); else a ConfigError."""
    prefix = f"{where}: " if where else ""
    if not isinstance(value, str) or not _SAFE_NAME.match(value) or ".." in value:
        raise ConfigError(
            f"{prefix}{what} {value!r} cannot name a folder: use 1-100 letters, digits, '.', '_', '+' or '-', "
            "starting with a letter or digit and without '..' (it names the run's folders under --out)"
        )
    return value



_PLAIN = (bool, int, float, str, type(None), list, tuple, dict)
_KINDS = {
    "int": (int,), "float": (int, float), "str": (str,), "bool": (bool,), "None": (type(None),),
    "list": (list, tuple), "tuple": (list, tuple), "Sequence": (list, tuple), "dict": (dict,),
}
_KIND_WORDS = {"int": "an integer", "float": "a number", "str": "a quoted string", "bool": "True or False",
               "None": "None", "list": "a list [...]", "tuple": "a list or tuple", "Sequence": "a list [...]",
               "dict": "a dict {...}"}


def expected_kinds(annotation: object, default: object) -> list[str] | None:
    """The kinds (keys of _KINDS) a parameter accepts, from its annotation or else its default; None: unknown."""
    if isinstance(annotation, str) and annotation:
        kinds = []
        for part in annotation.split("|"):
            head = part.strip().split("[", 1)[0]
            if head not in _KINDS:
                return None  # a class, Any, Callable...: not checked here
            kinds.append(head)
        return kinds
    if isinstance(default, bool):
        return ["bool"]
    if isinstance(default, int):
        return ["int"]
    if isinstance(default, float):
        return ["float"]
    if isinstance(default, str):
        return ["str"]
    return None


def _matches(value: object, kinds: list[str]) -> bool:
    for kind in kinds:
        allowed = _KINDS[kind]
        if isinstance(value, bool) and bool not in allowed:
            continue  # True is an int to Python, not to a config
        if isinstance(value, allowed):
            return True
    return False


def type_problem(selector: str, param: str, value: object, kinds: list[str], where: str | None) -> str:
    """One line: where, the binding, what it is, what it must be, and how to write it."""
    expected = " or ".join(_KIND_WORDS[k] for k in kinds)
    got = type(value).__name__
    hint = ""
    if isinstance(value, str) and any(k in ("int", "float") for k in kinds):
        try:
            number = float(value)
            hint = f"; write it without quotes: {selector}.{param} = {value.strip()}"
            if "float" not in kinds and not number.is_integer():
                hint = f"; write a whole number: {selector}.{param} = {int(number)}"
        except ValueError:
            hint = "; write a number"
    elif isinstance(value, float) and "int" in kinds and "float" not in kinds:
        hint = f"; write a whole number, e.g. {selector}.{param} = {int(value)}"
    elif "str" in kinds and not isinstance(value, str):
        hint = f"; quote it: {selector}.{param} = '{value}'"
    prefix = f"{where}: " if where else ""
    return f"{prefix}{selector}.{param} = {value!r} is a {got}, but it must be {expected}{hint}"


def check_value_types(loaded: LoadedConfig | None = None) -> None:
    """ConfigError for bound literal values of the wrong type (a quoted number, a float where an integer goes).

    Parameters are checked against their annotations (or defaults) in the registry; references, macros and
    parameters of unregistered or loosely typed components are left to the components.
    """
    names = set(registry.registered_names())
    problems = []
    for (scope, selector), values in gin.config._CONFIG.items():
        qualified = selector if selector in names else next((n for n in names if n.endswith("." + selector)), None)
        if qualified is None:
            continue
        fn = registry.get(qualified).target
        fn = fn.__init__ if inspect.isclass(fn) else fn
        try:
            signature = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        for param, value in values.items():
            if param not in signature or not isinstance(value, _PLAIN):
                continue
            p = signature[param]
            kinds = expected_kinds(p.annotation if p.annotation is not inspect.Parameter.empty else None,
                                   p.default if p.default is not inspect.Parameter.empty else None)
            if kinds is None or _matches(value, kinds):
                continue
            where = locate(loaded, qualified, param, scope)
            problems.append(type_problem(qualified, param, value, kinds, where))
    if problems:
        raise ConfigError("\n".join(problems))


def references(value: object):
    """Every gin reference (`@component()` or `%MACRO`) inside a bound value (lists, tuples and dicts searched)."""
    if isinstance(value, gin.config.ConfigurableReference):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from references(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from references(item)


def _macro_references(value: object):
    """The name of every `%MACRO` reference inside a bound value."""
    for reference in references(value):
        if reference.selector in ("gin.macro", "macro"):
            yield reference.scoped_selector.rsplit("/", 1)[0]


def check_macros(loaded: LoadedConfig | None = None) -> None:
    """ConfigError for a `%MACRO` used in a binding but never bound (gin would fail with a bare TypeError)."""
    bound = {scope.rsplit("/", 1)[-1] for (scope, selector), values in gin.config._CONFIG.items()
             if selector in ("gin.macro", "macro") and "value" in values}
    problems = []
    for (scope, selector), values in list(gin.config._CONFIG.items()):
        for param, value in values.items():
            for name in _macro_references(value):
                if name.rsplit("/", 1)[-1] in bound:
                    continue
                where = locate(loaded, selector, param, scope) or (selector if selector != "gin.macro" else name)
                family = next((f for f in registry.FAMILIES.values() if f.macro == name), None)
                fix = (f"include a preset that binds it (components/{family.name}/<name>.gin, `tvrl-bench list "
                       f"{family.name}`) or bind it: {name} = @{family.name}.<name>()" if family else
                       f"bind it before use: {name} = <value>, or write the value instead of %{name}")
                target = f"{selector}.{param}" if selector not in ("gin.macro", "macro") else f"macro {scope}"
                problems.append(f"{where}: {target} = %{name}, but macro {name} is never bound; {fix}")
    if problems:
        raise ConfigError("\n".join(dict.fromkeys(problems)))
