"""Building a trial's settings and sharding through gin, with gin's errors reworded as `FILE:LINE: ...` lines."""

from __future__ import annotations

import re

from tvrl_bench import config as gin_config, registry
from tvrl_bench.config.component_checks import bound_values, qualified_name
from tvrl_bench.config.statements import short_origin
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.parallel.sharding import ShardingSettings


def build_sharding(loaded: gin_config.LoadedConfig) -> ShardingSettings:
    """`training.sharding` as the config binds it; a bad value is a ConfigError naming where it was bound."""
    try:
        return ShardingSettings()
    except gin_config.ConfigError as exc:
        name = str(exc).removeprefix("training.sharding.").split(" ", 1)[0]
        where = gin_config.locate(loaded, "training.sharding", name)
        message = without_gin_context(str(exc))
        raise gin_config.ConfigError(f"{where}: {message}" if where else message) from None


def build_settings(loaded: gin_config.LoadedConfig) -> TrialSettings:
    """Construct the trial through gin, then reject bindings nothing used."""
    try:
        settings = TrialSettings()
    except gin_config.ConfigError as exc:  # a value out of range: name the file and line that bound it
        raise gin_config.ConfigError(locate_values(loaded, without_gin_context(str(exc)))) from None
    except registry.RegistryError as exc:  # a family's macro unbound, or a component of the wrong family
        families = ", ".join(f.axis for f in registry.trial_families())
        raise gin_config.ConfigError(
            f"{without_gin_context(str(exc))}. A trial needs one of each: {families}; start from "
            "components/profiles/toy.gin (`include 'components/profiles/toy.gin'`)"
        ) from None
    except ValueError as exc:  # a value no declared check refused, but the component cannot take
        if (refused := bound_value_refused(loaded, str(exc))) is None:
            raise
        raise gin_config.ConfigError(refused) from None
    gin_config.check_unused(loaded)
    return settings


def bound_value_refused(loaded: gin_config.LoadedConfig, message: str) -> str | None:
    """A component's ValueError as a config mistake, `WHERE: building NAME: WHAT; check ...`, when the config binds
    values of the component gin was building (its declared checks should have refused the value: a gap to close
    in its CHECKS); None when it binds none (then the error is not the user's)."""
    found = re.search(r"In call to configurable '([\w.]+)'", message)
    names = set(registry.registered_names())
    qualified = qualified_name(found.group(1), names) if found else None
    if qualified is None:
        return None
    places = [(param, where) for param in bound_values(qualified, names)
              if (where := gin_config.locate(loaded, qualified, param))]
    if not places:
        return None
    own = {b.origin for b in loaded.top_level}
    places.sort(key=lambda p: (p[1] != "--gin_bindings", p[1] not in own))
    users = [p for p in places if p[1] == "--gin_bindings" or p[1] in own] or places
    bound = ", ".join(f"{qualified}.{param} ({short_origin(where)})" for param, where in users[:3])
    what = without_gin_context(message).splitlines()[0]
    return f"{short_origin(places[0][1])}: building {qualified}: {what}; check the values bound to it: {bound}"


def without_gin_context(message: str) -> str:
    """The message without the "In call to configurable ..." lines gin appends."""
    return message.split("\n  In call to configurable", 1)[0].strip()


def locate_values(loaded: gin_config.LoadedConfig, message: str) -> str:
    """Prefix each `training.FAMILY.NAME = ...` line of a validation message with where NAME was bound."""
    lines = []
    for line in message.splitlines():
        if found := re.match(r"([a-z_][\w.]*)\.(\w+) ?=", line):
            where = gin_config.locate(loaded, found.group(1), found.group(2))
            line = f"{where}: {line}" if where else line
        lines.append(line)
    return "\n".join(lines)
