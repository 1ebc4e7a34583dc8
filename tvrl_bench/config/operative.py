"""The operative config (what the run's configurables were called with), read through gin's public API.

gin keeps it in a private table; its public form is `gin.operative_config_str()`: a `# Parameters for S:` header
for every configurable called (scope/selector, the selector shortened to its minimal unique form), followed by
its parameters as gin statements (values formatted with `pprint`, so they parse back to equal values), with the
macros used in a `# Macros:` section first. `operative_bindings` and `called_configurables` parse that text back
with gin's own parser and complete every selector to its registered name.

gin leaves out values it cannot write as a literal (no component of this package has one), `pprint` sorts the
keys of dict values, and the configurables come sorted (unscoped before scoped), not in the order of their first
call. Configs that turn on gin's dynamic registration (`from __gin__ import dynamic_registration`,
which writes selectors as module paths) are not supported; plain `import` statements are.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import gin
from gin import config_parser

MACRO = "gin.macro"  # the selector gin records a macro under, its name being the scope
_HEADER = re.compile(r"^# Parameters for (?P<scoped>\S+):$", re.MULTILINE)


class OperativeBinding(NamedTuple):
    """One parameter value the run used: `scope/selector.param = value` (selector complete, e.g. 'training.trial')."""

    scope: str
    selector: str
    param: str
    value: Any


def operative_bindings(text: str | None = None) -> list[OperativeBinding]:
    """Every operative parameter value and every macro used (selector MACRO, the macro's name as scope), in the
    order of `text` (default: `gin.operative_config_str()`)."""
    found = []
    text = gin.operative_config_str() if text is None else text
    for statement in config_parser.ConfigParser(text, gin.config.ParserDelegate()):
        if not isinstance(statement, config_parser.BindingStatement):  # the config's `import` statements
            continue
        if not statement.arg_name:  # `NAME = value` in the macros section
            name = "/".join(filter(None, (statement.scope, statement.selector)))
            found.append(OperativeBinding(name, MACRO, "value", statement.value))
            continue
        scope, selector = _complete("/".join(filter(None, (statement.scope, statement.selector))))
        found.append(OperativeBinding(scope, selector, statement.arg_name, statement.value))
    return found


def called_configurables() -> list[tuple[str, str]]:
    """(scope, complete selector) of every configurable called since the config was cleared, macros included
    (scope: the macro's name), those that recorded no parameter value too."""
    text = gin.operative_config_str()
    macros = [(b.scope, b.selector) for b in operative_bindings(text) if b.selector == MACRO]
    # Headers, not statements: a configurable called without a literal parameter value has a header only.
    return macros + [_complete(m.group("scoped")) for m in _HEADER.finditer(text)]


def _complete(scoped_selector: str) -> tuple[str, str]:
    """(scope, registered selector) of a `scope/selector` whose selector may be shortened, as gin resolves a
    reference `@scope/selector`."""
    return gin.config.ConfigurableReference(scoped_selector, False).config_key
