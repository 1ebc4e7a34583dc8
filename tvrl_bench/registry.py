"""The component registry: families, registration over gin, listing, and "did you mean" suggestions.

Every component is a class registered under a module-qualified gin name, `<family>.<name>` (for example
`samplers.flow` or `credit.window`), so two families can never collide on a short name. A preset file in
`components/<family>/<name>.gin` configures one component and binds it to its family's macro
(`SAMPLER = @samplers.flow()`).
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable

import importlib.util  # noqa: F401  (gin 0.5 needs it imported before an include path can fail)

import gin

# family -> (macro that presets bind, one-line description)
FAMILIES: dict[str, tuple[str | None, str]] = {
    "policies": ("POLICY", "video generators: encode prompts, predict velocities, decode videos"),
    "samplers": ("SAMPLER", "stochastic (SDE) and deterministic steps of the flow-matching sampler"),
    "rewards": ("REWARD", "frozen critics scoring (video, check) pairs, differentiable w.r.t. the video"),
    "credit": ("CREDIT", "credit routers: per-token weights from critic gradients or features"),
    "objectives": ("OBJECTIVE", "policy-gradient losses over transition log-probs"),
    "evaluators": ("EVALUATOR", "metrics computed on generated videos after training"),
    "executors": ("EXECUTOR", "where the trials of a sweep run (local processes, Ray)"),
    "datasets": ("DATASET", "prompt sets with their yes/no checks"),
    "judges": ("JUDGE", "pairwise judges for win-rate studies"),
    "extractors": (None, "reward-agnostic feature extractors used by the feature-map router"),
    "training": (None, "the trial loop and its schedule"),
    "sweeps": (None, "study definitions: axes of presets, seeds, tables"),
}

# Modules that register components; importing them fills the registry. Every one must be imported before a
# gin file is parsed, since gin only knows names that were registered at parse time.
COMPONENT_MODULES: list[str] = [
    "tvrl_bench.samplers",
    "tvrl_bench.credit",
    "tvrl_bench.objectives",
    "tvrl_bench.policies",
    "tvrl_bench.training",
    "tvrl_bench.tracking",
    "tvrl_bench.report",
    "tvrl_bench.world",
    "tvrl_bench.rewards",
    "tvrl_bench.evaluation",
    "tvrl_bench.datasets",
    "tvrl_bench.sweep",
]


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
        configured = gin.configurable(name, module=family)(target)
        _REGISTRY[qualified] = Component(family, name, configured, _first_docstring_line(target), source)
        return configured

    return decorate


def import_components(extra_modules: list[str] | None = None) -> None:
    """Import every module that registers components (and any extra ones a user names)."""
    for module in COMPONENT_MODULES + list(extra_modules or []):
        importlib.import_module(module)


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
