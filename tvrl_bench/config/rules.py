"""How a component declares its parameters' valid values: one `CHECKS = Checks(...)` in its class body.

    @register("objectives", "best_of_n")
    class BestOfN(MatchingObjective):
        CHECKS = Checks(
            top_k=integer(1, example="1"),
            weighting=one_of(*WEIGHTINGS),
            relations=[Relation(("top_k", "training.trial.group_size"), _top_k_below_group)],
        )

A `Rule` is one parameter's valid values (a test, what the value must be, an example; the builders `number`,
`positive`, `integer`, `one_of`, ... are in config/rule_kinds.py and imported from here); a `Relation` is a
condition across values, this component's own (`top_k`) or another's by binding name
(`training.trial.group_size`), that returns what is wrong and the fix, or None; with `warn=True` it only warns
(a value the user may mean). The declaration is used twice, and written once:

- when the config is read, before anything is built (`config.component_checks.check_components`): each problem
  is one line naming the file and line (or `--gin_bindings`) that bound the value, the value, and the fix;
- when the component is constructed (`Checks.__set_name__` wraps the class's `__init__`), so a component built
  by hand is checked by the same rules; relations that read another component's values run only at config time.

A class inherits its bases' checks (`declared_checks` merges them along the MRO); a registered function declares
them with `@checked(Checks(...))`.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.rule_kinds import (  # noqa: F401  (a component imports its rules from here)
    Rule, fraction_range, integer, number, odd_integer, one_of, optional, positive, template,
)


class RuleError(ConfigError):
    """A value refused by a component's declared checks (see the module docstring)."""


class Unknown(KeyError):
    """A value a relation reads is not known here (a reference, or another component's value at build time)."""


class Values:
    """The values a relation reads: `v["top_k"]` (this component's), `v["training.trial.group_size"]` (another's,
    by binding name; Unknown when not known here), `v.binding("top_k")` -> "objectives.best_of_n.top_k = 8",
    `v.default("top_k")`: the constructor's default (Unknown when not known here)."""

    def __init__(self, selector: str, own: Mapping[str, Any], outside: Callable[[str], Any] | None = None,
                 defaults: Callable[[str], Any] | None = None):
        self.selector, self.own, self.outside, self.defaults = selector, own, outside, defaults

    def default(self, key: str) -> Any:
        if self.defaults is None:
            raise Unknown(key)
        return self.defaults(key)

    def name(self, key: str) -> str:
        return key if "." in key else f"{self.selector}.{key}"

    def __getitem__(self, key: str) -> Any:
        if "." not in key:
            if key not in self.own:
                raise Unknown(key)
            return self.own[key]
        if self.outside is None:
            raise Unknown(key)
        return self.outside(key)

    def binding(self, key: str) -> str:
        return f"{self.name(key)} = {self[key]!r}"


@dataclass(frozen=True)
class Relation:
    """A condition across values. `uses`: this component's parameters by name, other components' by binding
    name; `test(values) -> str | None` returns what is wrong and the fix (one sentence naming the bindings) or
    None; `warn`: a value the user may mean, warned once instead of refused."""

    uses: tuple[str, ...]
    test: Callable[[Values], str | tuple[str, tuple[str, ...]] | list[tuple[str, tuple[str, ...]]] | None]
    warn: bool = False
    config_only: bool = False  # judged where the config is known only (who bound a value), not at construction

    @property
    def reads_others(self) -> bool:
        return self.config_only or any("." in u for u in self.uses)


@dataclass(frozen=True)
class Problem:
    """One refused (or, `warn`, warned) value: the message and the parameters that bound it, own first; `named`:
    the relation named the parameter at fault first (its binding is where the problem is, not the others'; a
    value a shipped preset bound there is its choice, config/component_checks.py)."""

    message: str
    params: tuple[str, ...]
    warn: bool = False
    named: bool = False


@dataclass
class Checks:
    """A component's declared checks: a Rule per parameter, and Relations (see the module docstring)."""

    rules: dict[str, Rule] = field(default_factory=dict)
    relations: tuple[Relation, ...] = ()

    def __init__(self, relations: Iterable[Relation] = (), **rules: Rule):
        self.rules, self.relations = dict(rules), tuple(relations)

    def merged(self, other: Checks) -> Checks:
        """These checks with `other`'s added (other's rule wins for a parameter both declare)."""
        return Checks([*self.relations, *other.relations], **{**self.rules, **other.rules})

    def problems(self, selector: str, values: Values, *, relations: bool = True) -> list[Problem]:
        """Every value `values` gives that a rule refuses, then every relation that fails (relations only when
        every value they read is known and passes its rule)."""
        found = []
        refused = set()
        for name, rule in self.rules.items():
            try:
                value = values[name]
            except Unknown:
                continue
            if (message := rule.problem(f"{selector}.{name}", value)) is not None:
                found.append(Problem(message, (name,)))
                refused.add(name)
        for relation in self.relations if relations else ():
            if refused & set(relation.uses) or (relation.reads_others and values.outside is None):
                continue  # a value it reads is refused already, or not known here (a component built by hand)
            try:
                message = relation.test(values)
            except (Unknown, TypeError, ValueError):
                continue
            for one in message if isinstance(message, list) else [message]:
                named = isinstance(one, tuple)
                text, params = one if named else (one, relation.uses)
                if text:
                    found.append(Problem(text, params, relation.warn, named))
        return found

    def __set_name__(self, owner: type, name: str) -> None:
        """Declared in a class body: the class's constructor checks its own arguments by these rules."""
        if name == "CHECKS" and "__init__" in owner.__dict__:
            owner.__init__ = _checking(owner.__init__, self)


def _checking(init: Callable[..., None], checks: Checks) -> Callable[..., None]:
    signature = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        enforce(checks, selector_of(type(self)), signature, (self, *args), kwargs)
        init(self, *args, **kwargs)

    __init__.__signature__ = signature  # gin reads the parameters with getfullargspec, which does not unwrap
    return __init__


def enforce(checks: Checks, selector: str, signature: inspect.Signature, args: tuple, kwargs: dict) -> None:
    """RuleError listing what `checks` refuse of a call's arguments (relations reading other components skipped)."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return  # the call itself fails with Python's own message
    defaults = {p.name: p.default for p in signature.parameters.values() if p.default is not p.empty}
    bound.apply_defaults()
    values = Values(selector, dict(bound.arguments), defaults=lambda key: _known(defaults, key))
    problems = [p for p in checks.problems(selector, values) if not p.warn]
    if problems:
        raise RuleError("\n".join(p.message for p in problems))


def _known(mapping: Mapping[str, Any], key: str) -> Any:
    if key not in mapping:
        raise Unknown(key)
    return mapping[key]


def checked(checks: Checks) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare `checks` on a registered function (a class writes `CHECKS = Checks(...)` instead)."""
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            enforce(checks, selector_of(wrapper), signature, args, kwargs)
            return fn(*args, **kwargs)

        wrapper.CHECKS = checks
        wrapper.__signature__ = signature
        return wrapper

    return decorate


def declared_checks(target: Any) -> Checks | None:
    """The checks `target` (a registered class or function) declares, its bases' included; None: none."""
    if not inspect.isclass(target):
        return getattr(target, "CHECKS", None)
    merged = None
    for cls in reversed(target.__mro__):
        own = cls.__dict__.get("CHECKS")
        if isinstance(own, Checks):
            merged = own if merged is None else merged.merged(own)
    return merged


def selector_of(target: Any) -> str:
    """The registered name of a class or function (`objectives.nft`), else its Python name."""
    from tvrl_bench import registry

    for component in registry.components():
        fn = component.target
        if fn is target or getattr(fn, "__wrapped__", None) is target or fn is getattr(target, "__wrapped__", None):
            return component.qualified_name
    return getattr(target, "__qualname__", str(target))
