"""Constructors read from source: a registered class's description and parameters, without importing it.

The rule is the registry's (constructors.constructor_signature): along the class's method resolution order (C3,
computed from the syntax trees), a constructor that hands `*args` and `**kwargs` on adds its keyword-only
parameters to the next one's, and the first that does not ends the walk. Defaults are rendered by source_values.
"""

from __future__ import annotations

import ast

from tvrl_bench.cli.source_values import render_default


class Unreadable(Exception):
    """A component this module cannot describe from source alone."""


def parameters(fn: ast.FunctionDef, is_method: bool, constants: dict[str, object]) -> tuple[tuple[str, str], ...]:
    """((name, rendered default), ...) of a function's own parameters, `self` left out of a method's."""
    args = fn.args
    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = list(zip((a.arg for a in positional), defaults))
    params += list(zip((a.arg for a in args.kwonlyargs), args.kw_defaults))
    if is_method and params and params[0][0] in ("self", "cls"):
        params = params[1:]
    return tuple((name, render_default(default, constants)) for name, default in params)


def first_line(node: ast.AST) -> str:
    """The first line of a class's or function's docstring ("" without one)."""
    doc = ast.get_docstring(node) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


# Bases whose constructor takes nothing a listing shows (inspect sees only *args, **kwargs or no parameter).
_EMPTY_BASES = {"object", "ABC", "Module"}


def _base_names(cls: ast.ClassDef) -> list[str]:
    return [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "?" for b in cls.bases]


def _linearization(name: str, classes: dict[str, ast.ClassDef]) -> list[str]:
    """The method resolution order (C3) of a class read from source; a base not defined in the scanned files is a
    leaf (its own bases unknown)."""
    if name not in classes:
        return [name]
    bases = _base_names(classes[name])
    pending = [_linearization(b, classes) for b in bases] + [list(bases)]
    order = [name]
    while any(pending):
        for seq in pending:
            head = seq[0] if seq else None
            if head is not None and not any(head in other[1:] for other in pending):
                break
        else:
            raise Unreadable(name)  # no consistent order: Python itself would refuse the class
        order.append(head)
        pending = [seq[1:] if seq and seq[0] == head else seq for seq in pending]
    return order


def _passes_on(init: ast.FunctionDef) -> bool:
    """Whether a constructor hands *args and **kwargs on to the next one (a cooperative mixin's)."""
    return init.args.vararg is not None and init.args.kwarg is not None


def describe_class(cls: ast.ClassDef, classes: dict[str, ast.ClassDef], constants: dict[str, object]) -> tuple[str, tuple]:
    """(description, parameters) of a class: its first docstring line, and its constructor's parameters by the
    registry's rule (constructors.constructor_signature): along the MRO, a constructor that hands *args and **kwargs
    on adds its keyword-only parameters to the next one's, and the first that does not ends the walk. A
    constructor inherited from outside the scanned files is Unreadable."""
    description = first_line(cls)
    added: dict[str, str] = {}
    for name in _linearization(cls.name, classes):
        if name not in classes:
            if name in _EMPTY_BASES:
                continue
            raise Unreadable(cls.name)
        init = next((n for n in classes[name].body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is None:
            continue
        if _passes_on(init):
            kwonly = zip((a.arg for a in init.args.kwonlyargs), init.args.kw_defaults)
            for arg, default in kwonly:
                added.setdefault(arg, render_default(default, constants))
            continue
        own = parameters(init, is_method=True, constants=constants)
        own = tuple((arg, added.get(arg, default)) for arg, default in own)
        names = {arg for arg, _ in own}
        return description, own + tuple((arg, default) for arg, default in added.items() if arg not in names)
    return description, tuple(added.items())
