"""Declaring checks (config/rules.py): the rules' words, a constructor checked by its class's declaration, checks
inherited along the class's bases and declared on a function."""

from __future__ import annotations

import pytest

from tvrl_bench.config.rules import (
    Checks, Relation, RuleError, Values, checked, declared_checks, fraction_range, integer, number, odd_integer,
    one_of, optional, positive, template,
)


@pytest.mark.parametrize("rule, good, bad, words", [
    (positive("1.0"), [1e-9, 3], [0, -1, float("nan"), float("inf"), True, "1"], "a number > 0"),
    (number(0, 1, high_open=True, example="0.0"), [0, 0.99], [1.0, -0.1], "a number in [0, 1)"),
    (integer(1, example="2"), [1, 7], [0, 1.0, True], "an integer >= 1"),
    (odd_integer("3"), [1, 3, 7], [0, 2, -1, 3.0], "an odd integer >= 1"),
    (one_of("a", "b"), ["a", "b"], ["c", "", 1], "one of 'a', 'b'"),
    (optional(integer(1, example="2")), [None, 2], [0], "an integer >= 1 or None"),
    (fraction_range(), [(0.0, 0.9), [0.5, 1.0]], [(0.9, 0.1), (0.5, 0.5), (-0.1, 0.5), (0.2, 1.5), (0.1,)],
     "0 <= start < end <= 1"),
    (template({"prompt"}, example="'{prompt}'"), ["Rate {prompt}", "{{x}} {prompt}"], ["", "{prompt} {other}", 3],
     "the field {prompt} and no other"),
])
def test_a_rule_accepts_its_values_and_says_what_it_wants(rule, good, bad, words):
    assert all(rule.accepts(v) for v in good)
    assert not any(rule.accepts(v) for v in bad)
    assert words in rule.must
    assert rule.problem("x.y", bad[0]).startswith(f"x.y = {bad[0]!r} must be ")


class Base:
    """A component with a checked constructor."""

    CHECKS = Checks(rate=positive("0.5"))

    def __init__(self, rate: float = 0.5):
        self.rate = rate


def _low_below_high(v: Values) -> str | None:
    return None if v["low"] < v["high"] else f"{v.binding('low')} must be below {v.binding('high')}"


class Child(Base):
    """Adds its own parameters and a relation; inherits Base's rule for rate."""

    CHECKS = Checks([Relation(("low", "high"), _low_below_high),
                     Relation(("low", "training.trial.group_size"), lambda v: "never asked at build time")],
                    low=integer(0, example="0"))

    def __init__(self, low: int = 0, high: int = 3, rate: float = 0.5):
        super().__init__(rate)
        self.low, self.high = low, high


def test_a_constructor_is_checked_by_its_declaration_its_bases_included():
    with pytest.raises(RuleError, match=r"Child.rate = -1 must be a number > 0, e.g. .*rate = 0.5"):
        Child(rate=-1)
    with pytest.raises(RuleError, match=r"Child.low = 5 must be below .*Child.high = 3"):
        Child(low=5)
    assert Child(low=1).low == 1  # a relation reading another component's value waits for the config
    assert set(declared_checks(Child).rules) == {"rate", "low"}
    assert len(declared_checks(Child).relations) == 2


def test_a_registered_function_declares_its_checks_with_checked():
    @checked(Checks(n=integer(0, example="4")))
    def make(n: int = 4) -> int:
        return n

    assert make(2) == 2
    with pytest.raises(RuleError, match="n = -1 must be an integer >= 0"):
        make(-1)
    assert declared_checks(make).rules["n"].example == "4"


def test_a_relation_is_skipped_while_a_value_it_reads_is_refused():
    problems = declared_checks(Child).problems("c", Values("c", {"low": -1, "high": -5, "rate": 1}))
    assert [p.message.split(" must")[0] for p in problems] == ["c.low = -1"]
