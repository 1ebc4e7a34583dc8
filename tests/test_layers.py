"""The package's layers (docs/architecture.md): no module imports a module of a higher layer, packages of one
layer import each other without cycles, and the toy world imports nothing of tvrl-bench outside itself.

Imports are read from the syntax tree, lazy ones inside functions included, so a layer cannot be crossed by
moving an import into a function.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import tvrl_bench

PACKAGE = Path(tvrl_bench.__file__).parent

# Bottom to top. A unit is a subpackage or a top-level module of tvrl_bench.
LAYERS = [
    {"registry", "config", "prompts", "tokens", "videoio"},
    {"world"},
    {"samplers", "policies", "rewards", "extractors", "credit", "objectives", "evaluators", "datasets", "judges",
     "executors"},
    {"tracking"},
    {"training"},
    {"recipes", "report"},
    {"sweeps", "annotate"},
    {"cli"},
]
LAYER_OF = {unit: i for i, units in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str | None:
    """'tvrl_bench.rewards.qwen.video' -> 'rewards'; None for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "tvrl_bench" else None


def imports() -> list[tuple[str, str, str]]:
    """(importing unit, imported unit, 'file:line') for every import of a tvrl_bench module by another unit."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        unit = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        if unit == "__init__":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            targets = {unit_of(name) for name in names} - {None, unit}
            # `from tvrl_bench import registry` names the unit in the alias, not in the module
            targets = {t for t in targets if t in LAYER_OF}
            found += [(unit, target, f"{relative}:{node.lineno}") for target in targets]
    return found


def test_every_unit_has_a_layer():
    units = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    units |= {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert units - {"assets"} == set(LAYER_OF), "add the new unit to LAYERS here and in docs/architecture.md"


def test_no_module_imports_a_higher_layer():
    upward = [f"{where}: {src} (layer {LAYER_OF[src]}) imports {dst} (layer {LAYER_OF[dst]})"
              for src, dst, where in imports() if LAYER_OF[dst] > LAYER_OF[src]]
    assert not upward, "\n".join(upward)


def test_the_world_imports_nothing_of_tvrl_bench_outside_itself():
    assert [(dst, where) for src, dst, where in imports() if src == "world"] == []


def test_units_import_each_other_without_cycles():
    graph = defaultdict(set)
    for src, dst, _ in imports():
        graph[src].add(dst)

    def reachable(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    cycles = sorted(unit for unit in list(graph) if unit in reachable(unit))
    assert cycles == [], f"units on an import cycle: {cycles}"


@pytest.mark.parametrize("source,expected", [("tvrl_bench.rewards.qwen.video", "rewards"), ("tvrl_bench", None),
                                             ("tvrl_bench.registry", "registry"), ("torch.nn", None)])
def test_unit_of(source, expected):
    assert unit_of(source) == expected


def test_the_checker_sees_a_crossing(tmp_path, monkeypatch):
    """A world module importing the trainer is reported (the checker is not vacuous)."""
    fake = tmp_path / "tvrl_bench"
    (fake / "world").mkdir(parents=True)
    (fake / "world" / "bad.py").write_text("def f():\n    from tvrl_bench.training.loop import Trainer\n")
    monkeypatch.setitem(globals(), "PACKAGE", fake)
    assert imports() == [("world", "training", "world/bad.py:2")]
