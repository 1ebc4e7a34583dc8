"""Every registered component declares its valid values (config/rules.py): its constructor raises no ValueError on a
value its declared checks accept, so a bad value is refused when the config is read, never as a bug while building.

The walk builds each component with its defaults and, one parameter at a time, with probe values of the
parameter's kind (negative, zero, huge, reversed pairs, unknown strings). A probe the checks refuse is skipped;
one they accept must construct without a ValueError (a missing file or model is fine: there is no checkpoint).
"""

from __future__ import annotations

import inspect
import os

import pytest

from tvrl_bench import registry
from tvrl_bench.cli.errors import is_user_error
from tvrl_bench.config import RuleError, declared_checks
from tvrl_bench.config.rules import Values

NUMBER_PROBES = [-1.0, -1e-9, 0.0, 0.5, 1.0, 1.5, 2.0, 1e9]
INTEGER_PROBES = [-1, 0, 1, 2, 3, 64]
STRING_PROBES = ["", "no-such-choice"]
MISSING = "/nonexistent/tvrl-bench-probe"
PAIR_PROBES = [(0.9, 0.1), (0.5, 0.5), (-0.1, 0.5), (0.2, 1.5), (0.0, 1.0)]


def required_arguments() -> dict[str, dict]:
    """Valid values for the parameters that have no default (a component to wrap, a folder that is not there)."""
    from tvrl_bench.evaluators.toy import ToyEvaluator
    from tvrl_bench.extractors.frame_difference import FrameDifference
    from tvrl_bench.rewards.toy_oracle import ToyOracle

    return {
        "rewards.combined": {"critics": {"a": ToyOracle(), "b": ToyOracle()}},
        "credit.feature_map": {"extractor": FrameDifference()},
        "judges.evaluator": {"evaluator": ToyEvaluator()},
        "judges.vlm": {"reward": ToyOracle()},
        "sweeps.study": {"name": "probe", "axes": {"sampler": ["sage"]}},
        "*": {"path": MISSING},
    }


SKIPPED = {
    "datasets.pair": "wraps two prompt sets; its checks are on them",
    "executors.ray": "starts a Ray cluster",
}


def probes(default: object) -> list[object]:
    if isinstance(default, bool) or default is None:
        return []
    if isinstance(default, int):
        return INTEGER_PROBES
    if isinstance(default, float):
        return NUMBER_PROBES
    if isinstance(default, str):
        return STRING_PROBES
    if isinstance(default, tuple) and len(default) == 2 and all(isinstance(v, float) for v in default):
        return PAIR_PROBES
    return []


def construct(component: registry.Component, arguments: dict) -> Exception | None:
    try:
        component.target(**arguments)
    except RuleError:
        raise
    except (OSError, ImportError) as exc:  # no checkpoint, model or optional package here
        return None if not isinstance(exc, ValueError) else exc
    except ValueError as exc:  # a user's mistake (a folder that is not there, a macro unbound) is not a bug
        return None if is_user_error(exc) else exc
    except Exception:  # noqa: BLE001 - a missing file reported by another type, a TypeError of a wrong kind
        return None
    return None


def walk(component: registry.Component) -> list[str]:
    """'name = value: ValueError: ...' for every probe the checks accept but the constructor refuses."""
    required = required_arguments()
    checks = declared_checks(component.target)
    base = dict(required.get(component.qualified_name, {}))
    for name, default in component.parameters():
        if default is inspect.Parameter.empty and name not in base:
            base[name] = required["*"].get(name)
    unknown = []
    for name, default in component.parameters():
        for value in probes(default):
            arguments = {**base, name: value}
            given = {n: d for n, d in component.parameters() if d is not inspect.Parameter.empty}
            given.update(arguments)
            if checks is not None and checks.problems(component.qualified_name,
                                                      Values(component.qualified_name, given)):
                continue
            try:
                exc = construct(component, arguments)
            except RuleError as refused:  # an own-values relation the probe above did not see: still declared
                continue
            if exc is not None:
                unknown.append(f"{name} = {value!r}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    return unknown


def all_components() -> list[registry.Component]:
    registry.import_components()
    return [c for c in registry.components() if c.qualified_name not in SKIPPED]


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.mark.parametrize("component", all_components(), ids=lambda c: c.qualified_name)
def test_a_component_refuses_no_value_its_declared_checks_accept(component):
    unknown = walk(component)
    assert not unknown, (
        f"{component.qualified_name} ({component.source}) raises ValueError on values its CHECKS accept; declare "
        f"them in its CHECKS (docs/configuration.md): " + "; ".join(unknown[:5])
    )


def test_the_walk_finds_a_constructor_check_the_declaration_does_not_know():
    """A component that still checks a value in its constructor, undeclared, fails the walk."""

    class Strict:
        """A probe component."""

        def __init__(self, rate: float = 0.5):
            if rate <= 0:
                raise ValueError("rate must be > 0")

    component = registry.Component("samplers", "strict_probe", Strict, "", __file__)
    assert walk(component) and walk(component)[0].startswith("rate = -1.0: ValueError")

    from tvrl_bench.config.rules import Checks, positive

    class Declared(Strict):
        """The same, declared."""

        CHECKS = Checks(rate=positive("0.5"))

    assert walk(registry.Component("samplers", "declared_probe", Declared, "", __file__)) == []
