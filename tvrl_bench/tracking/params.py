"""What a trial run is called and which params it carries (docs/report.md).

The preset of each axis (policy, sampler, reward, credit) is the last `components/<family>/<name>.gin` file
parsed whose component is the one actually built; a component configured without a preset is named by its
registered name. Every operative gin parameter is flattened into params as `<selector>.<param>`.
"""

from __future__ import annotations

import re
from typing import Any

import gin

from tvrl_bench import registry

_PRESET = re.compile(r"components/(?P<family>\w+)/(?P<name>[\w.-]+)\.gin$")
_MACRO = re.compile(r"^\s*(?P<macro>[A-Z_]+)\s*=\s*@(?P<selector>[\w.]+)\(\)", re.MULTILINE)


def preset_names(parsed_files: list[str], built: dict[str, Any]) -> dict[str, str]:
    """{axis: preset name} for policy, sampler, reward, credit; `built` maps axis -> the component object."""
    names = {}
    for axis, family in registry.logged_axes().items():
        selector = component_selector(built[axis])
        chosen = None
        for path in parsed_files:
            m = _PRESET.search(path.replace("\\", "/"))
            if m and m.group("family") == family and _preset_selects(path, selector):
                chosen = m.group("name")
        names[axis] = chosen or (selector.split(".", 1)[1] if selector else type(built[axis]).__name__)
    return names


def component_selector(obj: Any) -> str | None:
    """The registered `<family>.<name>` of a built component (None for an unregistered object)."""
    for component in registry.components():
        if type(obj) is component.target:
            return component.qualified_name
    return None


def _preset_selects(path: str, selector: str | None) -> bool:
    from tvrl_bench.config import ConfigError, resolve

    try:
        text = resolve(path).read_text()
    except (ConfigError, OSError):
        return False
    return any(m.group("selector") == selector for m in _MACRO.finditer(text))


def method_of(credit_preset: str, credit: Any, steps: int, objective: Any = None) -> str:
    """'base' without training, 'null' for the null control (objectives.null), 'GRPO' for uniform credit,
    'TVRL' for any other router."""
    presets = {
        "credit": "uniform" if component_selector(credit) == "credit.uniform" else credit_preset,
        "objective": "null" if objective is not None and component_selector(objective) == "objectives.null" else "",
    }
    return method_from_presets(presets, base=steps == 0)


def run_name(names: dict[str, str], seed: int, study: str | None = None) -> str:
    """`[<study>/][<policy>-]<sampler>-<reward>-<credit>-s<seed>` (the policy only when it is not the toy)."""
    parts = [names["sampler"], names["reward"], names["credit"]]
    if names["policy"] != "toy":
        parts.insert(0, names["policy"])
    base = "-".join(parts) + f"-s{seed}"
    return f"{study}/{base}" if study else base


def axis_run_name(labels: dict[str, str], seed: int, base: bool = False) -> str:
    """A study trial's name: its axis values in the study's axis order and its seed, `sage-window3-s0`
    (`base-s0` for an untrained base row), so runs of a study compare without opening them."""
    values = ["base"] if base else [_short(v) for v in labels.values()]
    return "-".join(values + [f"s{seed}"])


def _short(value: str) -> str:
    """A preset name from an axis value that may be a path (`components/rewards/toy_oracle.gin` -> toy_oracle)."""
    value = value.replace("\\", "/").rstrip("/")
    name = value.rsplit("/", 1)[-1]
    return name[: -len(".gin")] if name.endswith(".gin") else name


def method_from_presets(presets: dict[str, str], base: bool) -> str:
    """The `method` of a trial from its objective and credit preset names (the one rule; `method_of` applies it to
    built components, and a trial that failed before its components were built is named by its presets alone)."""
    if base:
        return "base"
    if presets.get("objective") == "null":
        return "null"
    return "GRPO" if presets.get("credit") == "uniform" else "TVRL"


def presets_in_files(parsed_files: list[str], axes: dict[str, str] | None = None) -> dict[str, str]:
    """{axis: preset} from the file names alone (the last `components/<family>/<name>.gin` parsed per family),
    for a trial whose components could not be built; `axes` (axis -> family) defaults to the logged ones."""
    names = {}
    for path in parsed_files:
        m = _PRESET.search(path.replace("\\", "/"))
        if m:
            for axis, family in (axes or registry.logged_axes()).items():
                if m.group("family") == family:
                    names[axis] = m.group("name")
    return names


def operative_params() -> dict[str, str]:
    """Every operative gin parameter as `<selector>.<param>` -> string (MLflow limits applied)."""
    params = {}
    for (scope, selector), values in gin.config._OPERATIVE_CONFIG.items():
        if selector == "gin.macro":
            continue
        for name, value in values.items():
            key = f"{selector}.{name}"
            text = _format(value)
            if len(key) <= 250:
                params[key] = text[:6000]
    return params


def _format(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)
