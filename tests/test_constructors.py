"""Constructors that follow cooperative mixins: the signature the registry gives a class, and the same rule read
from source by the listing (cli/source_constructors.py)."""

from __future__ import annotations

import inspect

from tvrl_bench import constructors
from tvrl_bench.cli import static_listing


COOPERATIVE = '''
def register(family, name):
    return lambda target: target


class Base:
    def __init__(self, a: int = 1, b: str = "x", *, c: float = 0.5):
        self.a, self.b, self.c = a, b, c


class Flag:
    def __init__(self, *args, flag: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.flag = flag


class FlagOff(Flag):
    def __init__(self, *args, flag: bool = False, depth: int = 3, **kwargs):
        super().__init__(*args, flag=flag, **kwargs)
        self.depth = depth


class Middle(Base):
    """Inherits Base's constructor."""


@register("objectives", "with_flag")
class WithFlag(Flag, Base):
    """Base with a flag."""


@register("objectives", "diamond")
class Diamond(FlagOff, Middle):
    """Base through Middle, with the flag off by default and a depth."""
'''


def _cooperative_classes(tmp_path):
    path = tmp_path / "cooperative.py"
    path.write_text(COOPERATIVE)
    namespace: dict = {}
    exec(compile(COOPERATIVE, str(path), "exec"), namespace)
    return path, namespace


def test_a_cooperative_constructor_adds_its_keywords_to_the_next_one_in_the_mro(tmp_path):
    _, ns = _cooperative_classes(tmp_path)
    shown = lambda cls: [(p.name, p.default) for p in constructors.constructor_signature(cls).parameters.values()]
    assert shown(ns["WithFlag"]) == [("self", inspect.Parameter.empty), ("a", 1), ("b", "x"), ("c", 0.5), ("flag", True)]
    assert shown(ns["Diamond"]) == [("self", inspect.Parameter.empty), ("a", 1), ("b", "x"), ("c", 0.5),
                                    ("flag", False), ("depth", 3)]
    assert shown(ns["Base"]) == [("self", inspect.Parameter.empty), ("a", 1), ("b", "x"), ("c", 0.5)]


def test_the_listing_read_from_source_follows_the_same_rule(tmp_path):
    path, ns = _cooperative_classes(tmp_path)
    listed = {c.name: c.parameters for c in static_listing._scan([path])}
    for name, cls in (("with_flag", ns["WithFlag"]), ("diamond", ns["Diamond"])):
        expected = tuple((p.name, repr(p.default)) for p in constructors.constructor_signature(cls).parameters.values()
                         if p.name != "self")
        assert listed[name] == expected
