"""Checking a study's `sweeps.study.decide` (staged decisions, tvrl_bench/decisions/) before anything runs.

Each problem is one line `STUDY.gin:LINE: sweeps.study.decide[...] ...: what is wrong; the fix`, like every other
study field (validate.py). The least seeds per stage is the fewest with which a stage can ever reach the rate:
with n seeds an arm and its baseline have C(2n, n) relabellings, so no p-value is below 2 / C(2n, n), and the first
stage may spend only alpha / max_stages. The decided metric must be one the study's trials log at their final step
(`final_metrics`: overall, the evaluator's categories and critic_reward, as eval/ and wide_eval/): a misspelt one
would run the first stage and then decide nothing.
"""

from __future__ import annotations

import math
from typing import Any

from tvrl_bench.config import ConfigError
from tvrl_bench.decisions.design import DEFAULTS, KEYS
from tvrl_bench.decisions.sequential import least_seeds_per_stage
from tvrl_bench.registry import suggest
from tvrl_bench.sweeps.validate import param_line, value_line

EXAMPLE = "{'baseline': {'credit': 'uniform'}, 'alpha': 0.05, 'seeds_per_stage': 5, 'max_stages': 3}"


def check_decide(study: Any, path: str) -> None:
    """The decide dict's keys and values against the study's axes and seeds (after --profile)."""
    decide = study.decide
    if decide is None:
        return

    def fail(message: str, line: int | None = None) -> None:
        raise ConfigError(f"{path}:{line or param_line(path, 'decide')}: sweeps.study.decide{message}")

    if not isinstance(decide, dict):
        fail(f" = {decide!r} must be a dict, e.g. {EXAMPLE}")
    for key in decide:
        if key not in KEYS:
            fail(f" has the unknown key {key!r}{suggest(str(key), KEYS)}; its keys are {', '.join(KEYS)}",
                 value_line(path, "decide", key))
    if "baseline" not in decide:
        fail(f" needs a 'baseline': the axis values every other arm is compared with, e.g. {EXAMPLE}")
    _check_baseline(decide["baseline"], study.axes, path, fail)
    values = {**DEFAULTS, **decide}
    alpha, n, stages = values["alpha"], values["seeds_per_stage"], values["max_stages"]
    if not isinstance(alpha, float) or not 0 < alpha < 0.5:
        fail(f"['alpha'] = {alpha!r} must be a family-wise error rate between 0 and 0.5 (exclusive), e.g. 0.05",
             value_line(path, "decide", "alpha"))
    if not _positive_int(stages):
        fail(f"['max_stages'] = {stages!r} must be a whole number of stages, 1 or more, e.g. 3",
             value_line(path, "decide", "max_stages"))
    least = least_seeds_per_stage(alpha, stages)
    if not _positive_int(n) or n < least:
        smallest = f"2/C({2 * n},{n}) = {2 / math.comb(2 * n, n):.3f}" if _positive_int(n) else "undefined"
        fail(f"['seeds_per_stage'] = {n!r} cannot reach alpha / max_stages = {alpha / stages:.4f} at a stage (the "
             f"smallest two-sided p-value of {n!r} seeds against {n!r} is {smallest}); give at least {least}, or "
             "fewer stages", value_line(path, "decide", "seeds_per_stage"))
    margin = values["margin"]
    if not isinstance(margin, (int, float)) or isinstance(margin, bool) or margin < 0:
        fail(f"['margin'] = {margin!r} must be a difference in table points, 0 or more (0: never decide 'within'), "
             "e.g. 3.0", value_line(path, "decide", "margin"))
    if not isinstance(values["metric"], str) or "/" not in values["metric"]:
        fail(f"['metric'] = {values['metric']!r} must name a logged metric, e.g. 'wide_eval/overall'",
             value_line(path, "decide", "metric"))
    if not _positive_int(values["permutations"]) or values["permutations"] < 1000:
        fail(f"['permutations'] = {values['permutations']!r} must be a whole number, 1000 or more, e.g. 20000",
             value_line(path, "decide", "permutations"))
    if len(study.seeds) < n * stages:
        raise ConfigError(
            f"{path}:{param_line(path, 'seeds')}: sweeps.study.seeds lists {len(study.seeds)} seeds, but "
            f"sweeps.study.decide runs up to {stages} stages of {n} seeds, taken in order: list at least "
            f"{n * stages} seeds"
        )


def final_metrics() -> tuple[str, ...]:
    """The metrics a trial of the parsed gin config logs at its final step: `eval/` and `wide_eval/` of `overall`,
    each category its evaluator declares (`Evaluator.categories`) and `critic_reward` (docs/report.md#run-contract)."""
    from tvrl_bench.config.trial_components import trial_components

    evaluator = next((part.target for part in trial_components() if part.axis == "evaluator"), None)
    names = ("overall", *getattr(evaluator, "categories", ()), "critic_reward")
    return tuple(f"{prefix}/{name}" for prefix in ("wide_eval", "eval") for name in names)


def check_decide_metric(study: Any, path: str, known: tuple[str, ...]) -> None:
    """ConfigError when `decide['metric']` is not one of `known` (final_metrics of the study's trials)."""
    metric = {**DEFAULTS, **(study.decide or {})}["metric"] if study.decide is not None else None
    if metric is None or not known or metric in known:
        return
    raise ConfigError(
        f"{path}:{value_line(path, 'decide', 'metric')}: sweeps.study.decide['metric'] = {metric!r} is not an "
        f"evaluation metric the study's trials log{suggest(str(metric), known)}; they log {', '.join(known)} at "
        "their final step: name one of them (the first stage would run and then decide nothing)"
    )


def _check_baseline(baseline: Any, axes: dict, path: str, fail) -> None:
    if not isinstance(baseline, dict) or not baseline:
        fail(f"['baseline'] = {baseline!r} must be a dict of axis -> value, e.g. {{'credit': 'uniform'}}")
    for axis, value in baseline.items():
        if axis not in axes:
            fail(f"['baseline'] names the axis {axis!r}, which the study does not have{suggest(str(axis), axes)}; "
                 f"its axes are {', '.join(axes)}", value_line(path, "decide", axis))
        if value not in axes[axis]:
            fail(f"['baseline'] = {{{axis!r}: {value!r}}}: {value!r} is not one of axis {axis!r}'s values"
                 f"{suggest(str(value), axes[axis])}; they are {', '.join(axes[axis])}",
                 value_line(path, "decide", value))


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
