"""A toy trial's parts share one world, refused in one line at config time when they do not (world/declaration.py).

The policy's checkpoint says which world it was trained on and its video size (a policy class offers
`checkpoint_world(values)`: policies/toy_bases.py for the toy policy); every other component the trial builds
(config/trial_components.py) may declare the worlds it serves (`worlds`). From the parsed config alone:
1. each component that declares worlds serves the policy's world, the dataset first (its prompts are the world);
2. what the toy dataset says the videos show (`drawn`: frames, size, square or sprite sizes, speed) is what the
   policy draws: the video is the policy's, so another value would change nothing but the logged params;
3. a parameter that acts in one world only (`world_parameters`), bound in the user's own files or on the command
   line, is refused on a trial of the other world (a value bound by an included preset is the preset's choice).
Each problem names the setting at fault where the user bound it (the command line first, then their own files),
the policy's setting, and the fix.
"""

from __future__ import annotations

from tvrl_bench import registry
from tvrl_bench.config import ConfigError, LoadedConfig, locate
from tvrl_bench.config.component_checks import default_values
from tvrl_bench.config.paths import shipped_preset
from tvrl_bench.config.statements import short_origin
from tvrl_bench.config.trial_components import TrialComponent, configured_values, trial_components
from tvrl_bench.policies.toy_bases import bases_of
from tvrl_bench.world.declaration import (CHECK_WORDS, PROFILES, WORLD_ADJECTIVES, WORLD_WORDS, CheckpointWorld,
                                          policy_draws, served_worlds, world_parameters)

# How a line says what a component of each family does with a world's checks ({}: 'sprite-world').
_DOES = {"datasets": "makes {} prompts", "rewards": "answers {} checks", "credit": "routes {} checks",
         "evaluators": "judges {} checks"}
# How a line says what a dataset's value makes of a field of the policy's world (world/declaration.py policy_draws).
_MAKES = {"frames": "videos of {} frames", "height": "frames {} px high", "width": "frames {} px wide",
          "min_size": "{} at least {} px wide", "max_size": "{} at most {} px wide",
          "speed": "sprites moving {} px per frame"}


class _Policy:
    """The trial's policy as the config sets it: its checkpoint's world, the setting that chose it, and where."""

    def __init__(self, loaded: LoadedConfig | None, part: TrialComponent, param: str, found: CheckpointWorld):
        values = configured_values(part.qualified)
        self.found, self.world = found, found.world
        self.setting = f"{part.qualified}.{param} = {values.get(param)!r}"
        self.origin = locate(loaded, part.qualified, param)
        self.where = short_origin(self.origin) if self.origin else None

    def described(self) -> str:
        """'components/profiles/toy.gin is the slot world (policies.toy.base = 'slots')'."""
        file = self.where.rsplit(":", 1)[0] if self.where and self.where != "--gin_bindings" else None
        subject = file or ("--gin_bindings" if self.where else "the policy")
        return f"{subject} is {WORLD_WORDS[self.world]} ({self.setting}{'' if self.where else ', the default'})"


def _origin(loaded: LoadedConfig | None, part: TrialComponent) -> str | None:
    """Where the config chose a component: its family's macro, or the trial's binding of its axis."""
    family = registry.FAMILIES[part.qualified.split(".")[0]]
    for selector, param in ((family.macro or "", ""), ("training.trial", part.axis)):
        if selector and (place := locate(loaded, selector, param)):
            return place
    return None


def _preferred(loaded: LoadedConfig | None, places: list[str | None]) -> str | None:
    """Of the places two settings were bound, the user's: the command line, then their own files, then any."""
    own = {b.origin for b in loaded.top_level} if loaded is not None else set()
    for wanted in (lambda p: p == "--gin_bindings", lambda p: p in own, lambda p: True):
        if chosen := next((p for p in places if p and wanted(p)), None):
            return chosen
    return None


_NOUNS = {"datasets": "dataset", "rewards": "critic", "credit": "router", "evaluators": "evaluator"}


def _serving(family: str, world: str) -> str:
    """The registered components of a family declared for `world`, those serving every world first: 'A or B', or
    'A, B or another slot-world critic (`tvrl-bench list rewards`)' when there are more."""
    found = sorted((len(served_worlds(c.target) or ()) == 1, c.qualified_name) for c in registry.components(family)
                   if world in (served_worlds(c.target) or ()))
    names = [name for _, name in found]
    noun = _NOUNS.get(family, "component")
    if len(names) <= 2:
        return " or ".join(names) or f"a {WORLD_ADJECTIVES[world]} {noun}"
    return f"{', '.join(names[:2])} or another {WORLD_ADJECTIVES[world]} {noun} (`tvrl-bench list {family}`)"


def _mismatch(loaded: LoadedConfig | None, policy: _Policy, part: TrialComponent, served: tuple[str, ...]) -> str:
    family = part.qualified.split(".")[0]
    theirs, ours = served[0], policy.world
    does = _DOES.get(family, "serves {} trials").format(" or ".join(WORLD_ADJECTIVES[w] for w in served))
    origin = _origin(loaded, part)
    bases = " or ".join(repr(b) for b in bases_of(theirs))
    other_bases = (f"a {WORLD_ADJECTIVES[theirs]} base (policies.toy.base = {bases})" if bases else
                   f"a policy of {WORLD_WORDS[theirs]}")
    alternatives = _serving(family, ours)
    if family == "datasets" and policy.origin and _preferred(loaded, [policy.origin, origin]) == policy.origin:
        return (f"{policy.where}: {policy.setting} is a {WORLD_ADJECTIVES[ours]} base, but {part.qualified} "
                f"({short_origin(origin) if origin else 'the dataset'}) {does}: use {other_bases}, or a "
                f"{WORLD_ADJECTIVES[ours]} dataset ({alternatives}) as {PROFILES[ours]} does")
    fix = f"use {alternatives}" + (f", or a critic trained on {WORLD_WORDS[ours]}" if family == "rewards" else "")
    fix += f"; or {other_bases}, as {PROFILES[theirs]} does" if family == "datasets" else ""
    where = short_origin(origin) if origin else part.qualified
    return f"{where}: {part.qualified} {does}; {policy.described()}: {fix}"


def _video_problem(loaded: LoadedConfig | None, policy: _Policy, part: TrialComponent) -> str | None:
    """A toy dataset value that says the videos differ from what the policy draws (check 2)."""
    drawn_by = getattr(part.target, "drawn", None)
    if drawn_by is None:
        return None
    values = configured_values(part.qualified)
    draws = policy_draws(policy.found)
    for field, (param, value) in drawn_by(values).items():
        if field not in draws or value == draws[field]:
            continue
        where = locate(loaded, part.qualified, param)
        objects = "squares" if policy.world == "slots" else "sprites"
        makes = _MAKES[field].format(*((objects, value) if field in ("min_size", "max_size") else (value,)))
        what = (f"{policy.found.video}" if field in ("frames", "height", "width") else
                f"{objects} of {draws['min_size']}-{draws['max_size']} px"
                + (f" moving {draws['speed']} px per frame" if "speed" in draws else ""))
        return (f"{short_origin(where) if where else part.qualified}: {part.qualified}.{param} = {values.get(param)!r} "
                f"makes {makes}, but the policy ({policy.setting}) draws {what}: the videos are the policy's, so "
                "this value would change nothing; remove the binding")
    return None


def _one_world_parameter(loaded: LoadedConfig | None, policy: _Policy, part: TrialComponent) -> str | None:
    """A parameter of another world's checks bound on this trial by the user, or by a preset to another value than
    its default (check 3; a preset's default, toy_oracle.gin's difficulty = 'default', states what acts anyway)."""
    own = {b.origin for b in loaded.top_level} if loaded is not None else set()
    values, defaults = configured_values(part.qualified), default_values(part.target)
    for world, params in world_parameters(part.target).items():
        if world == policy.world:
            continue
        for param in params:
            where = locate(loaded, part.qualified, param)
            users = where == "--gin_bindings" or (where in own and not shipped_preset(where))
            if where is not None and (users or values.get(param) != defaults.get(param)):
                fix = "remove the binding" if users else "leave out the preset that binds it"
                return (f"{short_origin(where)}: {part.qualified}.{param} = {values.get(param)!r} acts on "
                        f"{CHECK_WORDS[world]} only, and {policy.described()}, where it changes nothing; {fix}")
    return None


def policy_world(parts: list[TrialComponent] | None = None) -> tuple[str, object, CheckpointWorld] | None:
    """(the parameter that chose the parsed config's policy checkpoint as a binding name, 'policies.toy.base'; its
    value; the checkpoint's world and video size), or None: not a toy policy, or a checkpoint that does not say."""
    part = next((p for p in parts or trial_components() if p.axis == "policy"), None)
    hook = getattr(part.target, "checkpoint_world", None) if part else None
    values = configured_values(part.qualified) if hook else {}
    found = hook(values) if hook else None
    return None if found is None else (f"{part.qualified}.{found[0]}", values.get(found[0]), found[1])


def check_worlds(loaded: LoadedConfig | None = None) -> None:
    """ConfigError (one line) when the parsed config's trial mixes worlds (see the module docstring)."""
    parts = trial_components()
    if (found := policy_world(parts)) is None:
        return  # not a toy policy, or a checkpoint that does not say its world
    policy_part = next(p for p in parts if p.axis == "policy")
    policy = _Policy(loaded, policy_part, found[0].rsplit(".", 1)[1], found[2])
    ordered = sorted((p for p in parts if p is not policy_part), key=lambda p: p.axis != "dataset")
    for part in ordered:
        hook = getattr(part.target, "configured_worlds", None)
        served = hook(configured_values(part.qualified)) if hook else served_worlds(part.target)
        if served is not None and policy.world not in served:
            raise ConfigError(_mismatch(loaded, policy, part, served))
    for part in ordered:
        if problem := _video_problem(loaded, policy, part) or _one_world_parameter(loaded, policy, part):
            raise ConfigError(problem)
