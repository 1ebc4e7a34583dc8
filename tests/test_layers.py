"""The package's layers (docs/architecture.md): no module imports a module of a higher layer, packages of one
layer import each other without cycles, and so do the modules of every package, the toy world imports nothing of tvrl-bench outside itself, and the
trainer and the tracker reach components only through their family's contracts and helpers (never a module that
registers a component: components are built by gin from the config).

Imports are read from the syntax tree, lazy ones inside functions included, so a layer cannot be crossed by
moving an import into a function.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path
from typing import Collection

import pytest

import tvrl_bench

PACKAGE = Path(tvrl_bench.__file__).parent

# Bottom to top. A unit is a subpackage or a top-level module of tvrl_bench.
LAYERS = [
    {"registry", "constructors", "config", "prompts", "tokens", "videoio", "decisions"},
    {"world"},
    {"samplers", "policies", "rewards", "extractors", "credit", "objectives", "evaluators", "datasets", "judges",
     "executors"},
    {"tracking"},
    {"training"},
    {"recipes", "report"},
    {"sweeps", "annotate", "diagnostics"},
    {"cli"},
]
LAYER_OF = {unit: i for i, units in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str | None:
    """'tvrl_bench.rewards.qwen.video' -> 'rewards'; None for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "tvrl_bench" else None


def imported_names(path: Path) -> list[tuple[list[str], int]]:
    """(dotted names an import statement may import as modules, line) for every import in the file at `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(([node.module] + [f"{node.module}.{alias.name}" for alias in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            found.append(([alias.name for alias in node.names], node.lineno))
    return found


def parts_of(within: str = "") -> set[str]:
    """The parts of a package (`within`, "config" or "report/tables"; the whole package by default): its
    subpackages and its modules but `__init__`."""
    folder = PACKAGE / within
    found = {p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    return found | {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}


def imports(within: str = "", known: Collection[str] | None = None) -> list[tuple[str, str, str]]:
    """(importing unit, imported unit, 'file:line') for every import of a tvrl_bench module by another unit; with
    `within` ("training", "report/tables"), of one part of that package by another (a part: its subpackage or
    module; those in `known`, by default every part there is)."""
    prefix = ["tvrl_bench", *Path(within).parts]
    known = known if known is not None else parts_of(within) if within else LAYER_OF
    found = []
    for path in sorted((PACKAGE / within).rglob("*.py")):
        relative = path.relative_to(PACKAGE / within)
        unit = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        if unit == "__init__":
            continue
        for names, line in imported_names(path):
            # `from tvrl_bench import registry` names the unit in the alias, not in the module
            targets = {parts[len(prefix)] for name in names
                       if (parts := name.split("."))[: len(prefix)] == prefix and len(parts) > len(prefix)}
            targets = {t for t in targets if t in known} - {unit}
            found += [(unit, target, f"{Path(within, relative).as_posix()}:{line}") for target in targets]
    return found


FAMILIES = LAYERS[2]  # the component families
CONTRACT_USERS = {"training", "tracking"}  # units that may use a family's contracts and helpers only


def module_file(module: str) -> Path | None:
    """The source file of a dotted tvrl_bench module name (None for a name that is not a module, e.g. a class)."""
    base = PACKAGE.joinpath(*module.split(".")[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def registers_components(path: Path, seen: frozenset[Path] = frozenset()) -> bool:
    """Whether the module at `path` registers a component, or, for a package's `__init__`, re-exports a module
    of its family that does."""
    if "@register(" in path.read_text(encoding="utf-8"):
        return True
    if path.name != "__init__.py":
        return False
    family, seen = path.relative_to(PACKAGE).parts[0], seen | {path}
    return any(registers_components(source, seen) for names, _ in imported_names(path) for name in names
               if unit_of(name) == family and (source := module_file(name)) is not None and source not in seen)


def concrete_imports() -> list[str]:
    """'file:line: module' for every import of a component module by the trainer or the tracker."""
    found = []
    for unit in sorted(CONTRACT_USERS):
        for path in sorted((PACKAGE / unit).rglob("*.py")):
            for names, line in imported_names(path):
                for name in names:
                    source = module_file(name) if unit_of(name) in FAMILIES else None
                    if source is not None and registers_components(source):
                        found.append(f"{path.relative_to(PACKAGE)}:{line}: {name}")
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


def on_cycles(found: list[tuple[str, str, str]]) -> list[str]:
    """'src -> dst (file:line)' for every import (of `imports()`'s) whose two ends lie on one import cycle."""
    graph = defaultdict(set)
    for src, dst, _ in found:
        graph[src].add(dst)

    def reachable(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reach = {unit: reachable(unit) for unit in list(graph)}
    return sorted({f"{src} -> {dst} ({where})" for src, dst, where in found if src in reach.get(dst, ())})


def packages() -> list[str]:
    """Every package inside tvrl_bench ("config", "report/tables"), as `imports(within)` takes it."""
    return sorted(p.parent.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*/__init__.py"))


def test_units_import_each_other_without_cycles():
    cycles = on_cycles(imports())
    assert cycles == [], "imports on a cycle between units:\n" + "\n".join(cycles)


def test_the_modules_of_a_package_import_each_other_without_cycles():
    """Inside every package too, lazy imports included: a cycle between two modules of one package is a knot
    that a function-level import only hides."""
    cycles = [f"{within}: {line}" for within in packages() for line in on_cycles(imports(within))]
    assert cycles == [], "imports on a cycle inside a package:\n" + "\n".join(cycles)


def test_the_cycle_checker_sees_a_cycle_inside_a_package(tmp_path, monkeypatch):
    """Two modules of one package importing each other (one lazily) are reported; a third that only imports one of
    them is not."""
    fake = tmp_path / "tvrl_bench"
    (fake / "config").mkdir(parents=True)
    (fake / "config" / "__init__.py").write_text("from tvrl_bench.config.loading import load\n")
    (fake / "config" / "loading.py").write_text("from tvrl_bench.config.checks import check\n")
    (fake / "config" / "checks.py").write_text("def check():\n    from tvrl_bench.config import loading\n")
    (fake / "config" / "paths.py").write_text("from tvrl_bench.config.checks import check\n")
    monkeypatch.setitem(globals(), "PACKAGE", fake)
    assert packages() == ["config"]
    assert on_cycles(imports("config")) == ["checks -> loading (config/checks.py:2)",
                                            "loading -> checks (config/loading.py:1)"]


def test_trainer_and_tracker_import_no_component():
    """They may import a family's contracts and helpers (modules that register nothing), never a component."""
    found = concrete_imports()
    assert not found, "\n".join(found)


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


def test_the_checker_sees_a_component_import(tmp_path, monkeypatch):
    """A trainer module importing a component module (lazily) is reported, its contract is not, and neither is a
    family package whose `__init__` exports contracts only; one that re-exports a component is."""
    fake = tmp_path / "tvrl_bench"
    for folder in ("training", "rewards", "judges"):
        (fake / folder).mkdir(parents=True)
        (fake / folder / "__init__.py").write_text("")
    (fake / "rewards" / "base.py").write_text("class Reward:\n    pass\n")
    (fake / "rewards" / "oracle.py").write_text("@register('rewards', 'oracle')\nclass Oracle:\n    pass\n")
    (fake / "judges" / "__init__.py").write_text("from tvrl_bench.judges.vlm import CriticJudge\n")
    (fake / "judges" / "vlm.py").write_text("@register('judges', 'vlm')\nclass CriticJudge:\n    pass\n")
    (fake / "training" / "loop.py").write_text(
        "from tvrl_bench.rewards.base import Reward\nfrom tvrl_bench.rewards import base\n"
        "def f():\n    from tvrl_bench.rewards.oracle import Oracle\n    from tvrl_bench.judges import CriticJudge\n"
    )
    monkeypatch.setitem(globals(), "PACKAGE", fake)
    assert concrete_imports() == ["training/loop.py:4: tvrl_bench.rewards.oracle",
                                  "training/loop.py:5: tvrl_bench.judges"]


# Inside training/, bottom to top: a part is a subpackage or a top-level module of tvrl_bench/training.
TRAINING_LAYERS = [
    {"settings", "schedule", "optimizers", "muon", "consistency", "seeding", "reporting", "processes",
     "checkpoint", "eval_progress", "ode", "scoring", "false_yes"},
    {"step"},
    {"evaluation"},
    {"parallel"},
    {"loop"},
    {"trial"},
]
TRAINING_LAYER_OF = {part: i for i, parts in enumerate(TRAINING_LAYERS) for part in parts}




def test_every_part_of_training_has_a_layer():
    root = PACKAGE / "training"
    parts = {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    parts |= {p.stem for p in root.glob("*.py") if p.stem != "__init__"}
    assert parts == set(TRAINING_LAYER_OF), "add the new part to TRAINING_LAYERS here and in docs/architecture.md"


def test_no_part_of_training_imports_a_higher_one():
    """The step never imports the sharding or the loop, the loop never imports a trial's record."""
    upward = [f"{where}: {src} (layer {TRAINING_LAYER_OF[src]}) imports {dst} (layer {TRAINING_LAYER_OF[dst]})"
              for src, dst, where in imports("training", TRAINING_LAYER_OF)
              if TRAINING_LAYER_OF[dst] > TRAINING_LAYER_OF[src]]
    assert not upward, "\n".join(upward)


def test_the_training_checker_sees_a_crossing(tmp_path, monkeypatch):
    """A step module importing the sharding (lazily) is reported; importing the settings is not."""
    fake = tmp_path / "tvrl_bench"
    (fake / "training" / "step").mkdir(parents=True)
    (fake / "training" / "step" / "collect.py").write_text(
        "from tvrl_bench.training.settings import TrialSettings\n"
        "def f():\n    from tvrl_bench.training.parallel.sharding import shard_policy\n")
    monkeypatch.setitem(globals(), "PACKAGE", fake)
    assert imports("training", TRAINING_LAYER_OF) == [("step", "settings", "training/step/collect.py:1"),
                                                     ("step", "parallel", "training/step/collect.py:3")]


STEP = "tvrl_bench.training.step"
SCRIPT_FOLDERS = ("diagnostics", "benchmarks")  # beside the package: scripts that measure its trials


def checked_files(root: Path) -> list[Path]:
    """Every Python file of the package under `root` and of its script folders."""
    return sorted([*(root / "tvrl_bench").rglob("*.py"), *(p for f in SCRIPT_FOLDERS for p in (root / f).rglob("*.py"))])


def step_imports(root: Path) -> list[str]:
    """'file:line' for every import of the training step (`training/step/`) by a file outside tvrl_bench/training:
    the package, diagnostics/ and benchmarks/ (lazy imports included)."""
    training = root / "tvrl_bench" / "training"
    return [f"{path.relative_to(root).as_posix()}:{line}" for path in checked_files(root)
            if training not in path.parents
            for names, line in imported_names(path) if any(n == STEP or n.startswith(STEP + ".") for n in names)]


def test_the_step_is_private_to_training():
    """Every tool samples, scores and evaluates through the built trial (training/trial/built.py), so a tool's
    "sampled as training samples" holds by construction, not by a copy of the step."""
    found = step_imports(PACKAGE.parent)
    assert not found, "import the built trial (tvrl_bench.training.trial.built) instead:\n" + "\n".join(found)


def test_the_step_checker_sees_an_import_from_outside(tmp_path):
    """A script's lazy `from tvrl_bench.training import step` and a recipe's import are reported; training's own
    imports are not."""
    (tmp_path / "tvrl_bench" / "training" / "step").mkdir(parents=True)
    (tmp_path / "tvrl_bench" / "recipes").mkdir()
    (tmp_path / "diagnostics").mkdir()
    (tmp_path / "tvrl_bench" / "training" / "loop.py").write_text("from tvrl_bench.training.step.collect import c\n")
    (tmp_path / "tvrl_bench" / "recipes" / "data.py").write_text("import tvrl_bench.training.step.rollout\n")
    (tmp_path / "diagnostics" / "probe.py").write_text("def f():\n    from tvrl_bench.training import step\n")
    assert step_imports(tmp_path) == ["diagnostics/probe.py:2", "tvrl_bench/recipes/data.py:1"]


MAX_MODULE_LINES = 250


def test_no_module_or_script_is_over_250_lines():
    """Modules (and the scripts of diagnostics/ and benchmarks/) are cut by responsibility; one that grows past
    this has taken on a second job."""
    root = PACKAGE.parent
    long = [f"{path.relative_to(root)}: {n} lines" for path in checked_files(root)
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert not long, "\n".join(long)
