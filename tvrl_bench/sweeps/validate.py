"""Checking a study file before any trial starts: every value's type, emptiness, duplicates and names.

Each problem is one line `STUDY.gin:LINE: sweeps.study.PARAM ...: what is wrong; the fix`. A study must yield at
least one trial; an axis value or seed listed twice would run one trial key twice at once, so duplicates are
errors; the study name names folders under --out, so it must be a safe path component; every table must exist.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tvrl_bench.config import ConfigError, check_safe_name


def param_line(path: str, param: str) -> int:
    """The line of `sweeps.study.PARAM = ...` in the study file (1 when it is not written there)."""
    pattern = re.compile(rf"^\s*(?:sweeps\.)?study\.{re.escape(param)}\s*=")
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return 1
    for number, line in enumerate(lines, start=1):
        if pattern.match(line):
            return number
    return 1


def value_line(path: str, param: str, value: Any) -> int:
    """The line where `value` is written inside the binding of PARAM (the binding's first line otherwise)."""
    start = param_line(path, param)
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return start
    needle = repr(value) if not isinstance(value, str) else None
    for number in range(start, len(lines) + 1):
        line = lines[number - 1]
        if number > start and re.match(r"^\s*(?:sweeps\.)?study\.\w+\s*=", line):
            break
        if needle is not None and re.search(rf"(?<![\w.]){re.escape(needle)}(?![\w.])", line):
            return number
        if needle is None and re.search(rf"['\"]{re.escape(str(value))}['\"]", line):
            return number
    return start


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _str_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


def check_raw(study: Any, path: str) -> None:
    """Types of every field as the study file wrote them (before a --profile is applied)."""
    def fail(param: str, message: str, line: int | None = None) -> None:
        sep = ": " if message.startswith("axis ") else " "
        raise ConfigError(f"{path}:{line or param_line(path, param)}: sweeps.study.{param}{sep}{message}")

    check_safe_name(study.name, "study name (sweeps.study.name)", f"{path}:{param_line(path, 'name')}")
    if not isinstance(study.axes, dict):
        fail("axes", f"= {study.axes!r} must be a dict of axis -> list of presets, e.g. {{'sampler': ['sage', 'flow']}}")
    if not isinstance(study.seeds, (list, tuple)):
        fail("seeds", f"= {study.seeds!r} must be a list of integers, e.g. [0, 1, 2]")
    if not isinstance(study.profile, str) or not study.profile:
        fail("profile", f"= {study.profile!r} must name a profile file, e.g. 'components/profiles/toy.gin'")
    if not isinstance(study.base, bool) and not (_str_list(study.base) and study.base
                                                   and all(axis in study.axes for axis in study.base)):
        fail("base", f"= {study.base!r} must be True, False or a list of the study's axes "
                     f"({', '.join(study.axes) if isinstance(study.axes, dict) else 'none'}), e.g. ['reward']")
    if not _str_list(study.tables):
        fail("tables", f"= {study.tables!r} must be a list of table names, e.g. ['samplers']")
    if not _str_list(study.bindings):
        fail("bindings", f"= {study.bindings!r} must be a list of gin bindings as strings, e.g. ['training.trial.steps = 10']")
    if not isinstance(study.profiles, dict) or not all(isinstance(v, str) for v in study.profiles.values()):
        fail("profiles", f"= {study.profiles!r} must map profile names to files, e.g. {{'toy': 'components/profiles/toy.gin'}}")
    if not isinstance(study.exclude, list) or not all(
        isinstance(rule, dict) and rule and all(axis in study.axes and value in study.axes[axis] for axis, value in rule.items())
        for rule in study.exclude
    ):
        fail("exclude", f"= {study.exclude!r} must be a list of dicts of axis -> one of that axis's values, "
                        f"e.g. {_exclude_example(study.axes)}")
    if not isinstance(study.profile_axes, dict) or not all(isinstance(v, dict) for v in study.profile_axes.values()):
        fail("profile_axes", f"= {study.profile_axes!r} must map profile names to axes dicts")


def _exclude_example(axes: dict) -> str:
    """An `exclude` in the study's own axes: the last value of its first two axes (the made-up one without)."""
    named = [(a, v[-1]) for a, v in axes.items() if isinstance(v, (list, tuple)) and v and isinstance(v[-1], str)]
    if not named:
        return "[{'objective': 'nft_null', 'credit': 'uniform'}]"
    return "[{" + ", ".join(f"'{a}': '{v}'" for a, v in named[:2]) + "}]"


def check_study(study: Any, path: str) -> None:
    """Emptiness and duplicates of the axes and seeds the study will run (after --profile)."""
    def fail(param: str, message: str, line: int | None = None) -> None:
        sep = ": " if message.startswith("axis ") else " "
        raise ConfigError(f"{path}:{line or param_line(path, param)}: sweeps.study.{param}{sep}{message}")

    for axis, values in study.axes.items():
        if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) and v for v in values):
            fail("axes", f"axis '{axis}' = {values!r} must be a list of preset names, e.g. ['sage', 'flow']")
        if not values:
            fail("axes", f"axis '{axis}' is empty, so the study has no trials; list at least one preset or remove the axis")
        seen: set[str] = set()
        for value in values:
            if value in seen:
                fail("axes", f"axis '{axis}' lists '{value}' twice, which would run the same trial twice; "
                     "remove the duplicate", value_line(path, "axes", value))
            seen.add(value)
    if not study.seeds:
        fail("seeds", "is empty, so the study has no trials; list at least one seed, e.g. [0]")
    seen_seeds: set[int] = set()
    for seed in study.seeds:
        if not _is_int(seed):
            fail("seeds", f"holds {seed!r}, which is not an integer; write seeds as numbers, e.g. [0, 1, 2]",
                 value_line(path, "seeds", seed))
        if seed in seen_seeds:
            fail("seeds", f"lists seed {seed} twice, which would run the same trial twice; remove the duplicate",
                 value_line(path, "seeds", seed))
        seen_seeds.add(seed)


def check_tables(study: Any, path: str) -> None:
    """Every table the study names exists (a typo is found now, not after every trial has trained)."""
    from tvrl_bench.report.tables.definitions import load_table
    from tvrl_bench.report.errors import ReportError

    for name in study.tables:
        try:
            load_table(name)
        except ReportError as exc:
            raise ConfigError(f"{path}:{value_line(path, 'tables', name)}: sweeps.study.tables: {exc}") from None


def check_unique_keys(trials: list, path: str) -> None:
    """Two trials with one key would share a folder and a run: name both and stop."""
    seen: dict[str, Any] = {}
    for spec in trials:
        if spec.key in seen:
            raise ConfigError(
                f"{path}: trials '{seen[spec.key].title}' and '{spec.title}' have the same config (key {spec.key}), "
                "so they are one trial; remove one of the values that configure the same thing"
            )
        seen[spec.key] = spec


def in_study_file(message: str, bindings: tuple[str, ...], path: str) -> str:
    """A trial's config error that gin blamed on `--gin_bindings`, named where the study file wrote the binding
    (`STUDY.gin:LINE (sweeps.study.bindings)`) when it is one of the study's `bindings`; else unchanged."""
    lines = []
    for line in message.splitlines():
        for binding in bindings if line.startswith("--gin_bindings") else ():
            name = binding.split("=", 1)[0].strip()
            if name and (binding.strip() in line or f"{name} =" in line or f"'{name}'" in line):
                where = f"{path}:{_text_line(path, binding)} (sweeps.study.bindings)"
                line = where + line.removeprefix("--gin_bindings").removeprefix(f" '{binding.strip()}'")
                break
        lines.append(line)
    return "\n".join(lines)


def _text_line(path: str, text: str) -> int:
    """The first line of the file at `path` holding `text` (else that of sweeps.study.bindings)."""
    try:
        for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
            if text.strip() in line:
                return number
    except OSError:
        pass
    return param_line(path, "bindings")
