"""`sweeps.study`: what a study runs, as written in a study file (sweeps/<name>.gin).

    sweeps.study.name = 'samplers'
    sweeps.study.profile = 'components/profiles/toy.gin'
    sweeps.study.axes = {'sampler': ['sage', 'flow', 'dance'], 'credit': ['uniform', 'window3']}
    sweeps.study.seeds = [0, 1, 2]
    sweeps.study.tables = ['samplers']

An axis is a component family (its `axis` in the registry: policy, sampler, reward, credit, objective, evaluator,
dataset) whose values name presets in components/<family>/ (or give a preset's path); `exclude` lists combinations to leave out, each a
dict of axis values (`[{'objective': 'null', 'credit': 'uniform'}]`). `base = True` adds an untrained `base` trial per
seed; `base = ['reward']` one per seed for each reward (each critic then scores the base model itself). `bindings`
apply to every trial. `profile` defaults to the default regime's (world/declaration.py DEFAULT_PROFILE). `profiles`
maps `--profile` names to profile files and `profile_axes` replaces axes under a profile (the paper's critics are not
the toy critics). `decide` makes the study
run in stages until its comparisons are decided (tvrl_bench/decisions/design.py; checked in validate_decide.py).
"""

from __future__ import annotations

from typing import Any

from tvrl_bench.registry import register
from tvrl_bench.world.declaration import DEFAULT_PROFILE


@register("sweeps", "study")
class Study:
    """A study: a profile, axes of presets, seeds, an optional untrained base row, and its tables."""

    def __init__(
        self,
        name: str,
        axes: dict[str, list[str]],
        seeds: list[int] = (0, 1, 2),
        profile: str | None = None,
        base: bool | list[str] = False,
        tables: list[str] = (),
        bindings: list[str] = (),
        profiles: dict[str, str] | None = None,
        profile_axes: dict[str, dict[str, list[str]]] | None = None,
        exclude: list[dict[str, str]] = (),
        decide: dict | None = None,
    ):
        # Stored as written: tvrl_bench.sweeps.validate checks every field (with the file and line) before use.
        self.name = name
        self.axes = {axis: list(values) if isinstance(values, (list, tuple)) else values
                     for axis, values in axes.items()} if isinstance(axes, dict) else axes
        self.seeds = list(seeds) if isinstance(seeds, (list, tuple)) else seeds
        self.profile = DEFAULT_PROFILE if profile is None else profile  # None: the default regime's
        self.base = base
        self.tables = list(tables) if isinstance(tables, (list, tuple)) else tables
        self.bindings = list(bindings) if isinstance(bindings, (list, tuple)) else bindings
        defaults = {"toy": DEFAULT_PROFILE, "paper": "components/profiles/paper.gin"}
        self.profiles = {**defaults, **profiles} if isinstance(profiles, dict) else (profiles or defaults)
        self.exclude = [dict(e) if isinstance(e, dict) else e for e in exclude] if isinstance(exclude, (list, tuple)) else exclude
        self.profile_axes = ({k: dict(v) if isinstance(v, dict) else v for k, v in profile_axes.items()}
                             if isinstance(profile_axes, dict) else (profile_axes or {}))
        self.decide = dict(decide) if isinstance(decide, dict) else decide

    def with_profile(self, profile: str | None) -> "Study":
        """This study under another profile (`--profile NAME` or a path): its file and its axis overrides."""
        if profile is None:
            return self
        study = Study(self.name, self.axes, self.seeds, self.profiles.get(profile, profile), self.base, self.tables,
                      self.bindings, self.profiles, self.profile_axes, self.exclude, self.decide)
        study.axes.update(self.profile_axes.get(profile, {}))
        return study

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "profile": self.profile, "axes": self.axes, "seeds": self.seeds, "base": self.base,
                "decide": self.decide}
