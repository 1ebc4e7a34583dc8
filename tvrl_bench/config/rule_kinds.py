"""The kinds of valid value a component declares for one parameter (config/rules.py declares them).

A `Rule` is a test, what the value must be in words ("a number > 0") and a valid example as written in a config;
the builders below make the common ones: `number`, `positive`, `integer`, `odd_integer`, `one_of`, `optional`,
`fraction_range` and `template`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any, Callable


def _number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Rule:
    """One parameter's valid values: `test(value)` is true for them; `must` says in words what the value must be
    ("a number > 0"), `example` is a valid value as written in a config ("1.0"), or a function of the refused value
    giving one in the config's own names (a dict's keys kept: `{'toy_oracle': 1.0}`, not a made-up critic)."""

    test: Callable[[Any], bool]
    must: str
    example: str | Callable[[Any], str]

    def accepts(self, value: Any) -> bool:
        try:
            return bool(self.test(value))
        except (TypeError, ValueError):
            return False

    def problem(self, name: str, value: Any) -> str | None:
        """`NAME = VALUE must be ..., e.g. NAME = EXAMPLE`, or None when the value is valid."""
        if self.accepts(value):
            return None
        example = self.example(value) if callable(self.example) else self.example
        return f"{name} = {value!r} must be {self.must}, e.g. {name} = {example}"


def _bounds(low: float | None, high: float | None, low_open: bool, high_open: bool) -> tuple[Callable, str]:
    def within(v: float) -> bool:
        if low is not None and (v <= low if low_open else v < low):
            return False
        return not (high is not None and (v >= high if high_open else v > high))

    if low is not None and high is not None:
        words = f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    elif low is not None:
        words = f"{'>' if low_open else '>='} {low}"
    elif high is not None:
        words = f"{'<' if high_open else '<='} {high}"
    else:
        words = ""
    return within, words


def number(low: float | None = None, high: float | None = None, *, low_open: bool = False, high_open: bool = False,
           example: str, note: str = "") -> Rule:
    """A finite number (an int is a number) within the bounds; `low_open`: the bound itself is refused."""
    within, words = _bounds(low, high, low_open, high_open)
    must = f"a number {words}".strip() + (f" ({note})" if note else "")
    return Rule(lambda v: _number(v) and within(v), must, example)


def positive(example: str, note: str = "") -> Rule:
    """A finite number > 0."""
    return number(0, low_open=True, example=example, note=note)


def integer(low: int | None = None, high: int | None = None, *, example: str, note: str = "") -> Rule:
    """An integer within the inclusive bounds."""
    within, words = _bounds(low, high, False, False)
    must = f"an integer {words}".strip() + (f" ({note})" if note else "")
    return Rule(lambda v: _integer(v) and within(v), must, example)


def odd_integer(example: str, note: str = "the window is centred on its token") -> Rule:
    """An odd integer >= 1 (a window's side)."""
    return Rule(lambda v: _integer(v) and v >= 1 and v % 2 == 1, f"an odd integer >= 1 ({note})", example)


def template(required: set[str], allowed: set[str] | None = None, *, example: str, extra: str = "",
             also: Callable[[str], bool] = lambda text: True) -> Rule:
    """A str.format template with every field of `required` and no field outside `allowed` (default: required);
    `also`: a further test of the text, described by `extra`."""
    import string

    allowed = set(required) | set(allowed or ())

    def test(v: Any) -> bool:
        if not isinstance(v, str):
            return False
        fields = {name for _, name, _, _ in string.Formatter().parse(v) if name is not None}
        return set(required) <= fields <= allowed and also(v)

    fields = " and ".join("{" + f + "}" for f in sorted(required))
    others = sorted(allowed - set(required))
    must = (f"a template with the field{'s' if len(required) > 1 else ''} {fields}"
            + (f" (and maybe {', '.join('{' + f + '}' for f in others)})" if others else "") + " and no other"
            + (f", {extra}" if extra else "") + "; write literal braces as {{ and }}")
    return Rule(test, must, example)


def one_of(*choices: Any, note: str = "") -> Rule:
    """One of `choices` (the first is the example)."""
    must = f"one of {', '.join(repr(c) for c in choices)}" + (f" ({note})" if note else "")
    return Rule(lambda v: any(v == c and type(v) is type(c) for c in choices), must, repr(choices[0]))


def optional(rule: Rule) -> Rule:
    """`rule`, or None."""
    return Rule(lambda v: v is None or rule.test(v), f"{rule.must} or None", rule.example)


def fraction_range(example: str = "(0.0, 0.9)") -> Rule:
    """A pair (start, end) of fractions with 0 <= start < end <= 1."""
    def test(v: Any) -> bool:
        return (isinstance(v, (list, tuple)) and len(v) == 2 and all(_number(x) for x in v)
                and 0 <= v[0] < v[1] <= 1)
    return Rule(test, "a pair (start, end) with 0 <= start < end <= 1", example)
