"""Building a trial's settings and sharding through gin, with gin's errors reworded as `FILE:LINE: ...` lines."""

from __future__ import annotations

import re

from tvrl_bench import config as gin_config, registry
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
    gin_config.check_unused(loaded)
    return settings


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
