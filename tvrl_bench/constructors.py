"""Constructors that follow cooperative mixins: the parameters a registered class takes, stated once.

A mixin whose `__init__(self, *args, name=default, **kwargs)` hands the rest on (objectives.advantages.
PermutedAdvantages makes an objective its null control so) adds its keyword parameters to the objective's own;
`compose_constructor` gives such a class an `__init__` whose signature lists them all, so gin, the config checks
and `tvrl-bench list` see every parameter and the subclass restates none.
"""

from __future__ import annotations

import inspect
from typing import Any


def _passes_on(signature: inspect.Signature) -> bool:
    """Whether a constructor hands `*args` and `**kwargs` on to the next one (a cooperative mixin's)."""
    kinds = {p.kind for p in signature.parameters.values()}
    return {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD} <= kinds


def constructor_signature(cls: type) -> inspect.Signature:
    """Every parameter `cls(...)` takes, following cooperative constructors along the method resolution order.

    A constructor written `__init__(self, *args, name=default, **kwargs)` that hands `*args` and `**kwargs` on (a
    mixin such as objectives.advantages.PermutedAdvantages) adds its keyword-only parameters to those of the next
    constructor in the MRO; the first constructor that does not hand both on ends the walk. A parameter named twice
    keeps its most derived default. The static listing (cli/source_constructors.py) reads the source by the same rule.
    """
    added: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        signature = inspect.signature(init)
        if _passes_on(signature):
            for p in signature.parameters.values():
                if p.kind is inspect.Parameter.KEYWORD_ONLY:
                    added.setdefault(p.name, p)
            continue
        own = [p.replace(default=added[p.name].default) if p.name in added else p
               for p in signature.parameters.values()]
        extra = [p for n, p in added.items() if n not in signature.parameters]
        keyword = [p for p in own if p.kind is inspect.Parameter.VAR_KEYWORD]
        return signature.replace(parameters=[*(p for p in own if p not in keyword), *extra, *keyword])
    self = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    return inspect.Signature([self, *added.values()])


def compose_constructor(cls: Any) -> None:
    """Give a class whose constructor hands `*args, **kwargs` on an `__init__` that states every parameter
    (constructor_signature), so gin, the config checks and `tvrl-bench list` see them, and a wrong one fails with
    Python's own message naming it before anything is built."""
    if not inspect.isclass(cls):
        return  # a registered function states its own parameters
    init = cls.__init__
    if not _passes_on(inspect.signature(init)):
        return
    signature = constructor_signature(cls)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        signature.bind(self, *args, **kwargs)
        init(self, *args, **kwargs)

    __init__.__signature__ = signature  # gin reads parameters with getfullargspec, which honours __signature__
    __init__.__doc__ = init.__doc__
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    cls.__init__ = __init__
