"""The component listing read from the source files, without importing them (so without torch): the one way
`tvrl-bench list` reads the registry.

`tvrl-bench list` must answer at once; importing every component module takes seconds (benchmarks/cli_start.py:
`import_components_s`, 10 to 20 times the listing). Every built-in component is a module-level class or function
decorated with `@register("family", "name")`, whose constructor's defaults are literals, so the listing
(description = first docstring line, parameters with defaults) can be read from the syntax tree, by the registry's
constructor rule (source_constructors.py). A component beyond this reading (a constructor inherited from an unknown
class, a decorator with computed arguments) makes `scan()` raise Unreadable naming it; tests/cli/test_list.py holds
every registered component to the registry's own description and parameters. The result is cached
(`$XDG_CACHE_HOME/tvrl-bench/`, else ~/.cache/tvrl-bench/) under a hash of the source files' sizes and
modification times, so it is read again only after a source file changed. Reading a value (a default, a module
constant) from the syntax tree is source_values.py; a class's constructor, source_constructors.py.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from tvrl_bench.cli.source_constructors import Unreadable, describe_class, first_line, parameters
from tvrl_bench.cli.source_values import REQUIRED, evaluate, module_constants, render_default

__all__ = ["REQUIRED", "StaticComponent", "Unreadable", "evaluate", "module_constants", "package_files", "render_default",
           "scan"]


@dataclass(frozen=True)
class StaticComponent:
    family: str
    name: str
    description: str
    parameters: tuple[tuple[str, str], ...]  # (name, rendered default)

    @property
    def qualified_name(self) -> str:
        return f"{self.family}.{self.name}"


def package_files(modules: list[str]) -> list[Path]:
    """Every .py file of the given packages (or modules), found without importing them."""
    files: list[Path] = []
    for module in modules:
        spec = importlib.util.find_spec(module)
        if spec is None:
            raise Unreadable(module)
        if spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                files += sorted(Path(folder).rglob("*.py"))
        elif spec.origin and spec.origin.endswith(".py"):
            files.append(Path(spec.origin))
    return files


def _register_call(decorator: ast.expr) -> tuple[str, str] | None:
    if not isinstance(decorator, ast.Call):
        return None
    func = decorator.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name != "register":
        return None
    values = list(decorator.args) + [k.value for k in decorator.keywords if k.arg in ("family", "name")]
    if len(values) != 2 or not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
        raise Unreadable(ast.unparse(decorator))
    return values[0].value, values[1].value


def _module_file(module: str) -> Path | None:
    """The source file of a tvrl_bench module, found without importing it."""
    root = Path(__file__).resolve().parent.parent.parent
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _needed_names(tree: ast.Module) -> set[str]:
    """Names a registering module uses in its constructors' defaults and as base classes."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.update(b.id for b in node.bases if isinstance(b, ast.Name))
            functions = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
        elif isinstance(node, ast.FunctionDef):
            functions = [node]
        else:
            continue
        for fn in functions:
            for default in [*fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]:
                names.update(n.id for n in ast.walk(default) if isinstance(n, ast.Name))
    return names


def _trees(files: list[Path]) -> dict[Path, ast.Module]:
    """Syntax trees of the files that register components, and of the tvrl_bench modules they import a base
    class or a default's constant from; other files are not parsed (parsing all of them takes most of a second)."""
    parsed: dict[Path, ast.Module] = {}
    todo: list[tuple[Path, set[str] | None]] = [(p, None) for p in files if "register(" in p.read_text()]
    while todo:
        path, _ = todo.pop()
        if path in parsed:
            continue
        parsed[path] = tree = ast.parse(path.read_text(), filename=str(path))
        needed = _needed_names(tree)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tvrl_bench") and not node.level:
                if not needed & {alias.asname or alias.name for alias in node.names}:
                    continue
                found = _module_file(node.module)
                if found is not None and found not in parsed:
                    todo.append((found, None))
    return parsed


def _cache_file(files: list[Path]) -> Path:
    digest = hashlib.sha256()
    for path in files:
        stat = path.stat()
        digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tvrl-bench"
    return folder / f"components-{digest.hexdigest()[:20]}.pickle"


def scan(modules: list[str]) -> list[StaticComponent]:
    """Every registered component of `modules` read from source (cached); Unreadable naming a component that
    cannot be read so."""
    files = package_files(modules)
    cache = _cache_file(files)
    try:
        found = pickle.loads(cache.read_bytes())
        if isinstance(found, list) and all(isinstance(c, StaticComponent) for c in found):
            return found
    except Exception:  # no cache yet, or an unreadable one: read the sources
        pass
    found = _scan(files)
    if found:
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            for old in cache.parent.glob("components-*.pickle"):
                old.unlink(missing_ok=True)
            tmp = cache.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps(found))
            os.replace(tmp, cache)
        except OSError:  # a read-only home: no cache, still correct
            pass
    return found


def _scan(files: list[Path]) -> list[StaticComponent]:
    trees = _trees(files)
    classes = {n.name: n for tree in trees.values() for n in tree.body if isinstance(n, ast.ClassDef)}
    shared: dict[str, object] = {}  # constants imported from another module resolve by name
    per_module = {path: module_constants(tree) for path, tree in trees.items()}
    for constants in per_module.values():
        for name, value in constants.items():
            shared.setdefault(name, value)
    found = []
    for path, tree in trees.items():
        constants = {**shared, **per_module[path]}
        for node in tree.body:
            if not isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                continue
            for decorator in node.decorator_list:
                try:
                    registered = _register_call(decorator)
                    if registered is None:
                        continue
                    if isinstance(node, ast.ClassDef):
                        description, params = describe_class(node, classes, constants)
                    else:
                        description, params = first_line(node), parameters(node, False, constants)
                except Unreadable as exc:
                    raise Unreadable(f"{path}:{node.lineno}: {node.name} ({exc})") from None
                found.append(StaticComponent(registered[0], registered[1], description, params))
    return found
