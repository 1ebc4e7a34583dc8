"""The component registry: families, registration over gin, discovery, config checks, building, listing, suggestions.

Every component is a class registered under a module-qualified gin name, `<family>.<name>` (for example
`samplers.flow` or `credit.window`), so two families can never collide on a short name. A preset file in
`components/<family>/<name>.gin` configures one component and binds it to its family's macro
(`SAMPLER = @samplers.flow()`).
"""

from __future__ import annotations

import difflib
import functools
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import importlib.util  # noqa: F401  (gin 0.5 needs it imported before an include path can fail)

import gin

from tvrl_bench.constructors import compose_constructor

@dataclass(frozen=True)
class Family:
    """A kind of component, declared once: everything else (sweep axes, run params, the trial's fields, the
    listing, module discovery) is derived from this table.

    package: where its modules live (every module there that registers a component is imported by
    `import_components`). macro: the gin macro its presets bind (`REWARD = @rewards.toy_oracle()`). axis: the
    name of its sweep axis and of the trial's field (`training.trial.reward`), None when a trial has no such
    component. logged: whether a run records its preset name as an MLflow param under `axis`. contract:
    `module:Class` of the base class (or result type) its components honour, checked when a trial is built.
    """

    name: str
    package: str
    description: str
    macro: str | None = None
    axis: str | None = None
    logged: bool = False
    contract: str | None = None

    def contract_class(self) -> type | None:
        """The class named by `contract` (imported on first use, so the registry itself stays import-light)."""
        if self.contract is None:
            return None
        module, name = self.contract.split(":")
        return getattr(importlib.import_module(module), name)


FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family("policies", "tvrl_bench.policies", "video generators: encode prompts, predict velocities, decode videos",
           "POLICY", "policy", logged=True, contract="tvrl_bench.policies.base:Policy"),
    Family("samplers", "tvrl_bench.samplers", "stochastic (SDE) and deterministic steps of the flow-matching sampler",
           "SAMPLER", "sampler", logged=True, contract="tvrl_bench.samplers.base:Sampler"),
    Family("rewards", "tvrl_bench.rewards", "frozen critics scoring (video, check) pairs, differentiable w.r.t. the video (or rules)",
           "REWARD", "reward", logged=True, contract="tvrl_bench.rewards.base:Reward"),
    Family("credit", "tvrl_bench.credit", "credit routers: per-token weights from critic gradients or features",
           "CREDIT", "credit", logged=True, contract="tvrl_bench.credit.base:CreditRouter"),
    Family("objectives", "tvrl_bench.objectives", "losses: clipped ratios of transition log-probs, or flow matching",
           "OBJECTIVE", "objective", contract="tvrl_bench.objectives.base:Objective"),
    Family("evaluators", "tvrl_bench.evaluators", "metrics computed on generated videos after training",
           "EVALUATOR", "evaluator", contract="tvrl_bench.evaluators.base:Evaluator"),
    Family("datasets", "tvrl_bench.datasets", "prompt sets with their yes/no checks", "DATASET", "dataset",
           contract="tvrl_bench.prompts:PromptSet"),
    # chosen by `tvrl-sweep --executor NAME`, not by a preset: a study runs the same wherever it runs
    Family("executors", "tvrl_bench.executors", "where the trials of a sweep run (local processes, Ray)",
           contract="tvrl_bench.executors.base:Executor"),
    Family("judges", "tvrl_bench.judges", "pairwise judges for win-rate studies", "JUDGE",
           contract="tvrl_bench.judges.base:Judge"),
    Family("extractors", "tvrl_bench.extractors", "reward-agnostic feature extractors used by the feature-map router"),
    Family("training", "tvrl_bench.training", "the trial: its settings, denoising schedule and optimizer"),
    Family("sweeps", "tvrl_bench.sweeps", "study definitions: axes of presets, seeds, tables"),
]}


def trial_families() -> list[Family]:
    """The families a trial is made of, in the trial's order (policy, sampler, reward, credit, ...)."""
    return [f for f in FAMILIES.values() if f.axis]


def axes() -> dict[str, str]:
    """{sweep axis: family name}: `{'policy': 'policies', 'sampler': 'samplers', ...}`."""
    return {f.axis: f.name for f in trial_families()}


def logged_axes() -> dict[str, str]:
    """{run param: family name} for the families whose preset names every run records."""
    return {f.axis: f.name for f in trial_families() if f.logged}


class RegistryError(ValueError):
    """A component was registered wrongly (a name used twice, an unknown family)."""


@dataclass(frozen=True)
class Component:
    """One registered component: its family, name, class and where it was defined."""

    family: str
    name: str
    target: Callable[..., Any]
    description: str
    source: str

    @property
    def qualified_name(self) -> str:
        return f"{self.family}.{self.name}"

    def parameters(self) -> list[tuple[str, Any]]:
        """(name, default) for every constructor parameter; a required one has `inspect.Parameter.empty`."""
        fn = self.target.__init__ if inspect.isclass(self.target) else self.target
        params = []
        for p in inspect.signature(fn).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            params.append((p.name, p.default))
        return params


_REGISTRY: dict[str, Component] = {}


def _source_of(target: Callable[..., Any]) -> str:
    target = inspect.unwrap(target)  # a function whose checks wrap it (config/rules.py `checked`) is defined below
    try:
        path = inspect.getsourcefile(target) or "<unknown>"
        line = inspect.getsourcelines(target)[1]
        return f"{path}:{line}"
    except (OSError, TypeError):
        return "<unknown>"


def _first_docstring_line(target: Callable[..., Any]) -> str:
    doc = inspect.getdoc(target) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def register(family: str, name: str) -> Callable[[Any], Any]:
    """Register a class (or function) with gin as `<family>.<name>` and list it in `tvrl-bench list`.

    The first line of the docstring is the component's description in listings.
    """
    if family not in FAMILIES:
        raise RegistryError(
            f"unknown family '{family}' while registering '{name}'{suggest(family, FAMILIES)} "
            f"(families: {', '.join(FAMILIES)})"
        )

    def decorate(target: Any) -> Any:
        qualified = f"{family}.{name}"
        source = _source_of(target)
        if qualified in _REGISTRY:
            first = _REGISTRY[qualified]
            raise RegistryError(
                f"component '{qualified}' is registered twice: first at {first.source} "
                f"({first.target.__qualname__}), again at {source} ({target.__qualname__}). "
                "Rename one of them."
            )
        compose_constructor(target)
        configured = gin.configurable(name, module=family)(target)
        _REGISTRY[qualified] = Component(family, name, configured, _first_docstring_line(target), source)
        return configured

    return decorate


@functools.cache
def component_modules() -> tuple[str, ...]:
    """The families' modules whose source registers a component (`@register(`): files read once, not imported."""
    modules = []
    for family in FAMILIES.values():
        spec = importlib.util.find_spec(family.package)
        if spec is None or not spec.submodule_search_locations:
            raise RegistryError(f"family '{family.name}': package {family.package} not found")
        for folder in spec.submodule_search_locations:
            for path in sorted(Path(folder).rglob("*.py")):
                if "@register(" in path.read_text(encoding="utf-8"):
                    relative = path.relative_to(folder).with_suffix("").parts
                    modules.append(".".join((family.package, *relative)))
    return tuple(modules)


def import_components(extra_modules: list[str] | None = None) -> None:
    """Import every module that registers components (and any extra ones a user names).

    A component defined outside the package is registered by importing its module: name it here, or write
    `import my_package.my_critic` at the top of its preset (gin imports it while parsing).
    """
    for module in [*component_modules(), *(extra_modules or [])]:
        importlib.import_module(module)


_CONFIG_CHECKS: list[Callable[[], None]] = []


def config_check(check: Callable[[], None]) -> Callable[[], None]:
    """Declare `check` a config-time check of its component module: run by `run_config_checks` on every parsed
    config before anything is built, it reads the bindings (gin.query_parameter) and raises on a problem."""
    if check not in _CONFIG_CHECKS:
        _CONFIG_CHECKS.append(check)
    return check


def run_config_checks() -> None:
    """Run every declared config check (their modules are imported by `import_components`), in import order."""
    for check in _CONFIG_CHECKS:
        check()


def build(macro: str) -> Any:
    """Build the component the parsed config binds to `macro` (`REWARD = @rewards.toy_oracle()` -> a ToyOracle)."""
    try:
        bound = gin.query_parameter(f"{macro}/macro.value")
    except ValueError:
        families = [f.name for f in FAMILIES.values() if f.macro == macro]
        preset = f"components/{families[0]}/<name>.gin" if families else "a preset"
        raise RegistryError(
            f"nothing is bound to {macro}: include {preset} (or a profile such as components/profiles/toy.gin), "
            f"or bind it yourself: {macro} = @<family>.<name>()"
        ) from None
    return bound.scoped_configurable_fn() if hasattr(bound, "scoped_configurable_fn") else bound


def components(family: str | None = None) -> list[Component]:
    """Registered components, sorted, optionally of one family."""
    if family is not None and family not in FAMILIES:
        raise RegistryError(f"unknown family '{family}'{suggest(family, FAMILIES)}")
    found = [c for c in _REGISTRY.values() if family is None or c.family == family]
    return sorted(found, key=lambda c: (list(FAMILIES).index(c.family), c.name))


def get(qualified_name: str) -> Component:
    """The component registered as `<family>.<name>`; an unknown name suggests the closest ones."""
    if qualified_name not in _REGISTRY:
        raise RegistryError(f"no component named '{qualified_name}'{suggest(qualified_name, _REGISTRY)}")
    return _REGISTRY[qualified_name]


def registered_names() -> list[str]:
    return sorted(_REGISTRY)


def suggest(word: str, candidates: Any, n: int = 3) -> str:
    """'; did you mean 'a', 'b'?' for the closest candidates, or '' when none is close."""
    close = difflib.get_close_matches(word, list(candidates), n=n, cutoff=0.5)
    if not close:
        return ""
    return "; did you mean " + ", ".join(f"'{c}'" for c in close) + "?"
