"""Ranges of `training.trial` and `training.optimizer` values, checked before anything is built or trained.

`check_ranges(selector, values)` takes a configurable's values by name (an object's attributes, or what a config
binds) and raises ConfigError with the binding, its value, the allowed range and an example of a valid binding.
Types are checked earlier for every component (`tvrl_bench.config.check_value_types`); the rules repeat the type
test so an object built by hand is checked too. Unknown names are ignored. This table is the one place these
values are validated: the classes call it when built, and a trial calls it on the parsed config before that.
"""

from __future__ import annotations

import inspect
from numbers import Real
from typing import Any, Callable, Mapping

from tvrl_bench.config import ConfigError

ADVANTAGE_STD = ("group", "global", "none")
OPTIMIZER_KINDS = ("adamw", "muon_adamw")

Rule = tuple[Callable[[Any], bool], str, str]  # (test, what it must be, an example of a valid value)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _one_of(choices: tuple[str, ...]) -> Rule:
    return lambda v: v in choices, f"one of {', '.join(repr(c) for c in choices)}", repr(choices[0])


TRIAL_RULES: dict[str, Rule] = {
    "steps": (lambda v: _integer(v) and v >= 0, "an integer >= 0 (0 evaluates the untrained policy)", "10"),
    "seed": (_integer, "an integer", "0"),
    "prompts_per_step": (lambda v: _integer(v) and v >= 1, "an integer >= 1", "2"),
    "group_size": (lambda v: _integer(v) and v >= 2, "an integer >= 2 (advantages compare rollouts of a group)", "4"),
    "micro_batch": (lambda v: _integer(v) and v >= 1, "an integer >= 1", "8"),
    "minibatches": (lambda v: _integer(v) and v >= 1, "an integer >= 1", "1"),
    "max_grad_norm": (lambda v: _number(v) and v > 0, "a number > 0", "1.0"),
    "advantage_std": _one_of(ADVANTAGE_STD),
    "advantage_eps": (lambda v: _number(v) and v >= 0, "a number >= 0", "1e-4"),
    "advantage_clip": (lambda v: v is None or (_number(v) and v > 0), "a number > 0 or None (no clipping)", "5.0"),
    "ratio_tolerance": (lambda v: _number(v) and v >= 0, "a number >= 0", "0.0"),
    "keep_rollout_graph": (lambda v: isinstance(v, bool), "True or False", "True"),
    "anchor_weight": (lambda v: _number(v) and v >= 0, "a number >= 0", "0.0"),
    "eval_prompts": (lambda v: _integer(v) and v >= 1, "an integer >= 1 (the final evaluation needs prompts)", "32"),
    "wide_eval_prompts": (lambda v: _integer(v) and v >= 0,
                          "an integer >= 0 (0: no wide evaluation; toy datasets: prompts drawn before the trained scenes are dropped)",
                          "1000"),
    "eval_every": (lambda v: _integer(v) and v >= 0, "an integer >= 0 (0: evaluate only at the end)", "20"),
    "eval_subset": (lambda v: v is None or (_integer(v) and v >= 1), "an integer >= 1 or None (all eval prompts)", "16"),
    "sample_videos": (lambda v: _integer(v) and v >= 0, "an integer >= 0", "4"),
    "checkpoint_every": (lambda v: _integer(v) and v >= 1, "an integer >= 1", "10"),
    "log_media_every": (lambda v: _integer(v) and v >= 1, "an integer >= 1", "10"),
    "num_gpus": (lambda v: _integer(v) and v >= 0, "an integer >= 0", "0"),
}

OPTIMIZER_RULES: dict[str, Rule] = {
    "kind": _one_of(OPTIMIZER_KINDS),
    "learning_rate": (lambda v: _number(v) and v > 0, "a number > 0", "1e-4"),
    "weight_decay": (lambda v: _number(v) and v >= 0, "a number >= 0", "0.0"),
    "betas": (
        lambda v: isinstance(v, (list, tuple)) and len(v) == 2 and all(_number(b) and 0 <= b < 1 for b in v),
        "two numbers in [0, 1)", "(0.9, 0.999)",
    ),
}

RULES: dict[str, dict[str, Rule]] = {"training.trial": TRIAL_RULES, "training.optimizer": OPTIMIZER_RULES}


def problems(selector: str, values: Mapping[str, Any],
             where: Callable[[str], str | None] = lambda name: None) -> list[str]:
    """One line per value out of its range: `[where: ]SELECTOR.NAME = VALUE must be ...; e.g. ...`."""
    found = []
    for name, (test, must, example) in RULES[selector].items():
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
            found.append(f"{prefix}{selector}.{name} = {value!r} must be {must}, e.g. {selector}.{name} = {example}")
    return found


def check_ranges(selector: str, values: Mapping[str, Any],
                 where: Callable[[str], str | None] = lambda name: None) -> None:
    """ConfigError listing every out-of-range value of `selector` (see `problems`)."""
    found = problems(selector, values, where)
    if found:
        raise ConfigError("\n".join(found))


def bound_values(selector: str, target: Any) -> dict[str, Any]:
    """The values a parsed gin config gives `selector` (bound, else `target`'s constructor default)."""
    import gin

    fn = target.__init__ if inspect.isclass(target) else target
    values = {}
    for name, p in inspect.signature(fn).parameters.items():
        if name not in RULES[selector]:
            continue
        try:
            value = gin.query_parameter(f"{selector}.{name}")
            if not isinstance(value, gin.config.ConfigurableReference):  # a macro: checked once built
                values[name] = value
        except ValueError:
            if p.default is not inspect.Parameter.empty:
                values[name] = p.default
    return values
