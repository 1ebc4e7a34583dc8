"""Ranges of `training.trial` values, checked before anything is built or trained.

`check_trial_values(values)` takes the values by name (a TrialSettings' attributes, or what a config binds) and
raises ConfigError with the binding, its value, the allowed range and an example of a valid binding. Types are
checked earlier for every component (`tvrl_bench.config.check_value_types`); this module repeats the type test
for `training.trial` so a TrialSettings built by hand is checked too. Unknown names are ignored.
"""

from __future__ import annotations

import inspect
from numbers import Real
from typing import Any, Callable, Mapping

from tvrl_bench.config import ConfigError

ADVANTAGE_STD = ("group", "global", "none")


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


# name -> (test, what it must be, an example of a valid value)
RULES: dict[str, tuple[Callable[[Any], bool], str, str]] = {
    "steps": (lambda v: _integer(v) and v >= 0, "an integer >= 0 (0 evaluates the untrained policy)", "10"),
    "seed": (_integer, "an integer", "0"),
    "prompts_per_step": (lambda v: _integer(v) and v >= 1, "an integer >= 1", "2"),
    "group_size": (lambda v: _integer(v) and v >= 2, "an integer >= 2 (advantages compare rollouts of a group)", "4"),
    "micro_batch": (lambda v: _integer(v) and v >= 1, "an integer >= 1", "8"),
    "minibatches": (lambda v: _integer(v) and v >= 1, "an integer >= 1", "1"),
    "learning_rate": (lambda v: _number(v) and v > 0, "a number > 0", "1e-4"),
    "weight_decay": (lambda v: _number(v) and v >= 0, "a number >= 0", "0.0"),
    "betas": (
        lambda v: isinstance(v, (list, tuple)) and len(v) == 2 and all(_number(b) and 0 <= b < 1 for b in v),
        "two numbers in [0, 1)", "(0.9, 0.999)",
    ),
    "max_grad_norm": (lambda v: _number(v) and v > 0, "a number > 0", "1.0"),
    "advantage_std": (lambda v: v in ADVANTAGE_STD, f"one of {', '.join(repr(a) for a in ADVANTAGE_STD)}", "'group'"),
    "advantage_eps": (lambda v: _number(v) and v >= 0, "a number >= 0", "1e-4"),
    "advantage_clip": (lambda v: v is None or (_number(v) and v > 0), "a number > 0 or None (no clipping)", "5.0"),
    "ratio_tolerance": (lambda v: _number(v) and v >= 0, "a number >= 0", "0.0"),
    "keep_rollout_graph": (lambda v: isinstance(v, bool), "True or False", "True"),
    "anchor_weight": (lambda v: _number(v) and v >= 0, "a number >= 0", "0.0"),
    "eval_prompts": (lambda v: _integer(v) and v >= 1, "an integer >= 1 (the final evaluation needs prompts)", "32"),
    "eval_every": (lambda v: _integer(v) and v >= 0, "an integer >= 0 (0: evaluate only at the end)", "20"),
    "eval_subset": (lambda v: v is None or (_integer(v) and v >= 1), "an integer >= 1 or None (all eval prompts)", "16"),
    "sample_videos": (lambda v: _integer(v) and v >= 0, "an integer >= 0", "4"),
    "checkpoint_every": (lambda v: _integer(v) and v >= 1, "an integer >= 1", "10"),
    "log_media_every": (lambda v: _integer(v) and v >= 1, "an integer >= 1", "10"),
    "num_gpus": (lambda v: _integer(v) and v >= 0, "an integer >= 0", "0"),
}


def problems(values: Mapping[str, Any], where: Callable[[str], str | None] = lambda name: None) -> list[str]:
    """One line per value out of its range: `[where: ]training.trial.NAME = VALUE must be ...; e.g. ...`."""
    found = []
    for name, (test, must, example) in RULES.items():
        if name not in values:
            continue
        value = values[name]
        try:
            ok = bool(test(value))
        except TypeError:
            ok = False
        if not ok:
            place = where(name)
            prefix = f"{place}: " if place else ""
            found.append(f"{prefix}training.trial.{name} = {value!r} must be {must}, e.g. training.trial.{name} = {example}")
    return found


def check_trial_values(values: Mapping[str, Any], where: Callable[[str], str | None] = lambda name: None) -> None:
    """ConfigError listing every out-of-range value (see `problems`)."""
    found = problems(values, where)
    if found:
        raise ConfigError("\n".join(found))


def bound_trial_values(settings_class: Any) -> dict[str, Any]:
    """The values a parsed gin config gives `training.trial` (bound, else the constructor's default)."""
    import gin

    fn = settings_class.__init__ if inspect.isclass(settings_class) else settings_class
    values = {}
    for name, p in inspect.signature(fn).parameters.items():
        if name not in RULES:
            continue
        try:
            value = gin.query_parameter(f"training.trial.{name}")
            if not isinstance(value, gin.config.ConfigurableReference):  # a macro: checked once built
                values[name] = value
        except ValueError:
            if p.default is not inspect.Parameter.empty:
                values[name] = p.default
    return values
