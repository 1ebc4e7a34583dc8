"""`sweeps.study`: what a study runs, as written in a study file (sweeps/<name>.gin).

    sweeps.study.name = 'samplers'
    sweeps.study.profile = 'components/profiles/toy.gin'
    sweeps.study.axes = {'sampler': ['sage', 'flow', 'dance'], 'credit': ['uniform', 'window3']}
    sweeps.study.seeds = [0, 1, 2]
    sweeps.study.tables = ['samplers']

An axis is a component family (policy, sampler, reward, credit, objective, evaluator, dataset) whose values name
presets in components/<family>/ (or give a preset's path). `base = True` adds an untrained `base` trial per
seed. `bindings` apply to every trial. `profiles` maps `--profile` names to profile files and
`profile_axes` replaces axes under a profile (the paper's critics are not the toy critics).
"""

from __future__ import annotations

from typing import Any

from tvrl_bench.registry import register

AXIS_FAMILIES = {
    "policy": "policies",
    "sampler": "samplers",
    "reward": "rewards",
    "credit": "credit",
    "objective": "objectives",
    "evaluator": "evaluators",
    "dataset": "datasets",
}


@register("sweeps", "study")
class Study:
    """A study: a profile, axes of presets, seeds, an optional untrained base row, and its tables."""

    def __init__(
        self,
        name: str,
        axes: dict[str, list[str]],
        seeds: list[int] = (0, 1, 2),
        profile: str = "components/profiles/toy.gin",
        base: bool = False,
        tables: list[str] = (),
        bindings: list[str] = (),
        profiles: dict[str, str] | None = None,
        profile_axes: dict[str, dict[str, list[str]]] | None = None,
    ):
        self.name = name
        self.axes = {axis: list(values) for axis, values in axes.items()}
        self.seeds = [int(s) for s in seeds]
        self.profile = profile
        self.base = base
        self.tables = list(tables)
        self.bindings = list(bindings)
        self.profiles = {"toy": "components/profiles/toy.gin", "paper": "components/profiles/paper.gin", **(profiles or {})}
        self.profile_axes = {k: dict(v) for k, v in (profile_axes or {}).items()}

    def with_profile(self, profile: str | None) -> "Study":
        """This study under another profile (`--profile NAME` or a path): its file and its axis overrides."""
        if profile is None:
            return self
        study = Study(self.name, self.axes, self.seeds, self.profiles.get(profile, profile), self.base, self.tables,
                      self.bindings, self.profiles, self.profile_axes)
        study.axes.update(self.profile_axes.get(profile, {}))
        return study

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "profile": self.profile, "axes": self.axes, "seeds": self.seeds, "base": self.base}
