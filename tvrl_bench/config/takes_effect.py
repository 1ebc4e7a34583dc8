"""Settings that change nothing in some modes, refused wherever they cannot take effect: one relation, declared once.

    CHECKS = Checks([takes_effect_when(("advantage_eps", "advantage_clip"), reads=("mode",), inert=_not_per_check)])

`inert(values)` returns None while the settings act, else (why they change nothing, the fix), each in words that
name the bindings; then each setting whose value differs from its constructor's default is refused, a line each:

    objectives.tvrl_official.advantage_clip = 0.5 changes nothing: <why>; remove it, or <fix>

A value equal to its default is accepted: a preset that states a default states what acts anyway; so is a value a
shipped preset (components/) bound, the preset's choice for its own mode (tvrl_question.gin's std floor stays
bound when a study swaps in tvrl_official.gin; unbinding it would change the recorded trials' keys). The settings may
be the component's own (by name) or another component's (by binding name, `training.trial.advantage_clip`): the
component whose mode makes them inert declares the relation, since it knows its modes. It runs when the config is
read, never when a component is constructed: whether a preset or the user bound a value is known there only (a
trial builds its components from shipped presets whose values for other modes it must accept). A value a trial's
parts make inert in one world only is the world check's (training/trial/world_check.py).
"""

from __future__ import annotations

from typing import Callable, Iterable

from tvrl_bench.config.rules import Relation, Unknown, Values

Inert = Callable[[Values], "tuple[str, str | Callable[[str], str]] | None"]


def takes_effect_when(settings: Iterable[str], reads: Iterable[str], inert: Inert) -> Relation:
    """A Relation refusing each of `settings` set to another value than its default while `inert(values)` says why
    it cannot take effect (see the module docstring); `reads`: the values `inert` reads (the mode), where a fix
    may be bound. The fix is a phrase, or a function of the refused setting's name giving one."""
    settings, reads = tuple(settings), tuple(reads)

    def test(v: Values) -> list[tuple[str, tuple[str, ...]]] | None:
        found = inert(v)
        if found is None:
            return None
        why, fix = found
        refused = []
        for name in settings:
            try:
                changed = v[name] != v.default(name)
            except Unknown:
                continue
            if changed:
                advice = fix(name) if callable(fix) else fix
                refused.append((f"{v.binding(name)} changes nothing: {why}; remove it, or {advice}", (name, *reads)))
        return refused

    return Relation(settings + reads, test, config_only=True)
