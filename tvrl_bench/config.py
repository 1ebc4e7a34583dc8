"""Loading gin configs: search paths, command-line bindings, clear errors, and the captured configs.

`load_config(files, bindings)` parses config files and `--gin_bindings` into gin's global config after
importing every component module. Names are resolved against the registry, so a typo fails at parse time with
the file, the line and the closest registered names. After the trial has built its components,
`check_unused(loaded)` rejects bindings (from the top-level files or the command line) that nothing used.
Included presets are exempt: a profile includes default presets that a later file may swap out.
"""

from __future__ import annotations

import inspect
import os
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

import importlib.util  # noqa: F401  (gin 0.5 needs it imported before an include path can fail)

import gin
from gin import config_parser

from tvrl_bench import registry

# The folder that holds components/ and sweeps/ in a checkout (the package is installed editable from it).
PROJECT_ROOT = Path(__file__).resolve().parent.parent
PATH_ENV = "TVRL_BENCH_PATH"


class ConfigError(ValueError):
    """A config file or binding is wrong; the message names the place and the fix."""


@dataclass(frozen=True)
class Binding:
    """One `scope/selector.param = value` statement and where it was written."""

    scope: str
    selector: str
    param: str
    origin: str  # "file.gin:LINE" or "--gin_bindings"


@dataclass
class LoadedConfig:
    """What was parsed: the files, the command-line bindings and the top-level binding statements."""

    files: list[str]
    bindings: list[str]
    top_level: list[Binding] = field(default_factory=list)
    parsed_files: list[str] = field(default_factory=list)  # every file parsed, includes too, in parse order

    def config_text(self) -> str:
        """The files and bindings as one gin text, so a worker process can re-parse exactly this config."""
        lines = [f"include '{f}'" for f in self.files] + list(self.bindings)
        return "\n".join(lines) + "\n"


def search_paths() -> list[Path]:
    """Where relative config paths (and `include` statements) are looked up, in order."""
    paths = [Path.cwd()]
    for entry in os.environ.get(PATH_ENV, "").split(os.pathsep):
        if entry:
            paths.append(Path(entry).resolve())
    if (PROJECT_ROOT / "components").is_dir():
        paths.append(PROJECT_ROOT)
    return paths


def resolve(path: str | os.PathLike[str]) -> Path:
    """The config file `path` names, searched like gin includes; a missing one is a ConfigError."""
    path = Path(path)
    if path.is_absolute():
        if path.is_file():
            return path
        raise ConfigError(f"config file not found: {path}")
    for prefix in search_paths():
        if (prefix / path).is_file():
            return (prefix / path).resolve()
    listed = ", ".join(str(p) for p in search_paths())
    raise ConfigError(
        f"config file not found: {path} (searched {listed}). Give a path relative to one of these folders, "
        f"or add its folder to ${PATH_ENV}."
    )


def _install_search_paths() -> None:
    # gin's "Python package resource" reader crashes (TypeError) on a folder that is a namespace package, such
    # as components/ when the checkout is on sys.path; plain files are all tvrl-bench reads, so drop it.
    gin.config._FILE_READERS[:] = [(r, exists) for r, exists in gin.config._FILE_READERS if r is open]
    for prefix in search_paths():
        if str(prefix) not in gin.config._LOCATION_PREFIXES:
            gin.add_config_file_search_path(str(prefix))


def load_config(
    files: list[str | os.PathLike[str]],
    bindings: list[str] | None = None,
    *,
    clear: bool = True,
    extra_modules: list[str] | None = None,
) -> LoadedConfig:
    """Parse `files` then `bindings` into gin's global config and return what was loaded.

    Raises ConfigError naming the file and line (or the binding) with a suggestion on any unknown name,
    misspelled parameter, missing include or syntax error.
    """
    registry.import_components(extra_modules)
    if clear:
        gin.clear_config()
    _install_search_paths()
    bindings = list(bindings or [])
    resolved = [str(resolve(f)) for f in files]
    loaded = LoadedConfig(files=resolved, bindings=bindings)
    for path in resolved:
        text = Path(path).read_text()
        loaded.top_level += _binding_statements(text, origin=path)
        parsed = _parse(lambda: gin.parse_config_file(path))
        loaded.parsed_files += _flatten_includes(parsed)
    for text in bindings:
        loaded.top_level += _binding_statements(text, origin="--gin_bindings")
        includes, _ = _parse(lambda: gin.parse_config(text), binding=text)
        for nested in includes:
            loaded.parsed_files += _flatten_includes(nested)
    check_value_types(loaded)
    return loaded


def _flatten_includes(parsed) -> list[str]:
    """Files of a gin ParsedConfigFileIncludesAndImports tree in parse order (a file before what it includes)."""
    files = [parsed.filename]
    for nested in parsed.includes:
        files += _flatten_includes(nested)
    return files


def check_unused(loaded: LoadedConfig) -> None:
    """Raise ConfigError for top-level bindings whose component was never built in this run.

    Call it after the trial constructed its components (gin records what was called).
    """
    called = list(gin.config._OPERATIVE_CONFIG)
    problems = []
    for b in loaded.top_level:
        if b.selector == "gin.macro" or not b.param:
            continue
        used = any(
            _same_configurable(selector, b.selector) and (not b.scope or b.scope in scope.split("/"))
            for scope, selector in called
        )
        if not used:
            built = sorted({selector for _, selector in called if selector.split(".")[0] == b.selector.split(".")[0]})
            hint = f" This run built {', '.join(built)}." if built else ""
            problems.append(
                f"{b.origin}: binding '{b.selector}.{b.param}' is never used: nothing in this run builds "
                f"'{b.selector}'.{hint} Remove the binding or select that component with its family macro."
            )
    if problems:
        raise ConfigError("\n".join(problems))


def _same_configurable(recorded: str, written: str) -> bool:
    return recorded == written or recorded.endswith("." + written)


class _ListingDelegate(config_parser.ParserDelegate):
    """Lets the gin parser walk a file to list its statements without resolving any name."""

    def configurable_reference(self, scoped_name: str, evaluate: bool) -> str:
        return scoped_name

    def macro(self, macro_name: str) -> str:
        return macro_name


def _binding_statements(text: str, origin: str) -> list[Binding]:
    try:
        statements = list(config_parser.ConfigParser(text, _ListingDelegate()))
    except SyntaxError as exc:
        raise ConfigError(_syntax_message(exc, origin)) from None
    except tokenize.TokenError as exc:
        line = exc.args[1][0] if len(exc.args) > 1 else "?"
        where = origin if origin == "--gin_bindings" else f"{origin}:{line}"
        raise ConfigError(f"{where}: gin syntax error: {exc.args[0]} (an unclosed bracket or quote above this line)") from None
    found = []
    for s in statements:
        if isinstance(s, config_parser.BindingStatement):
            where = f"{origin}:{s.location.line_num}" if origin != "--gin_bindings" else origin
            found.append(Binding(s.scope or "", s.selector, s.arg_name or "", where))
    return found


def _syntax_message(exc: SyntaxError, origin: str) -> str:
    where = origin if origin == "--gin_bindings" else f"{exc.filename or origin}:{exc.lineno}"
    return f"{where}: gin syntax error: {exc.msg}\n    {(exc.text or '').rstrip()}"


_UNKNOWN = re.compile(r"No configurable matching (?:reference )?'@?([\w./]+?)(?:\(\))?'")
_NO_PARAM = re.compile(r"Configurable '([\w.]+)' doesn't have a parameter named '(\w+)'")
_LOCATION = re.compile(r'In file "(.+?)", line (\d+)')
_NO_FILE = re.compile(r"Unable to open file: (\S+?)\. Searched config paths")


def _parse(parse, binding: str | None = None):
    try:
        return parse()
    except SyntaxError as exc:
        raise ConfigError(_syntax_message(exc, "--gin_bindings" if binding else "")) from None
    except (ValueError, OSError) as exc:
        raise ConfigError(_explain(str(exc), binding)) from None


def _explain(message: str, binding: str | None) -> str:
    """Rewrite a gin error as 'FILE:LINE: what is wrong; did you mean ...?'."""
    located = _LOCATION.findall(message)
    if binding is not None:
        where = f"--gin_bindings '{binding.strip()}'"
    elif located:
        where = ":".join(located[0])  # gin adds the innermost file first
    else:
        where = "config"
    if m := _UNKNOWN.search(message):
        name = m.group(1).split("/")[-1]
        return (
            f"{where}: unknown component or function '{name}'{registry.suggest(name, registry.registered_names())}"
            " (`tvrl-bench list` prints every registered name)"
        )
    if m := _NO_PARAM.search(message):
        selector, param = m.groups()
        names = [p for p, _ in registry.get(selector).parameters()] if selector in registry.registered_names() else []
        hint = registry.suggest(param, names) or (f"; its parameters are {', '.join(names)}" if names else "")
        return f"{where}: '{selector}' has no parameter '{param}'{hint}"
    if m := _NO_FILE.search(message):
        listed = ", ".join(str(p) for p in search_paths())
        return f"{where}: included file '{m.group(1)}' not found (searched {listed}); check the path or ${PATH_ENV}"
    first_line = message.splitlines()[0] if message else "invalid config"
    return f"{where}: {first_line}"


def captured_configs() -> dict[str, str]:
    """The full config (every binding parsed) and the operative one (what the run actually used)."""
    return {"config.gin": gin.config_str(), "operative_config.gin": gin.operative_config_str()}


# ---- values: types of bound literals, names used as path components ------------------------------------------

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$")


def check_safe_name(value: object, what: str, where: str = "") -> str:
    """`value` if it can name a folder (letters, digits, `.`, `_`, `+`, `-`; no `..`); else a ConfigError."""
    prefix = f"{where}: " if where else ""
    if not isinstance(value, str) or not _SAFE_NAME.match(value) or ".." in value:
        raise ConfigError(
            f"{prefix}{what} {value!r} cannot name a folder: use 1-100 letters, digits, '.', '_', '+' or '-', "
            "starting with a letter or digit and without '..' (it names the run's folders under --out)"
        )
    return value


def binding_locations(loaded: LoadedConfig) -> dict[tuple[str, str, str], str]:
    """(scope, selector, param) -> "file.gin:LINE" (or "--gin_bindings") of the binding gin applied last."""
    found: dict[tuple[str, str, str], str] = {}
    seen: set[str] = set()

    def walk(path: str) -> None:
        if path in seen:  # gin would stop on a cycle; here it only must not loop
            return
        seen.add(path)
        try:
            text = Path(path).read_text()
            statements = list(config_parser.ConfigParser(text, _ListingDelegate()))
        except (OSError, SyntaxError, tokenize.TokenError, UnicodeDecodeError):
            return
        for s in statements:
            if isinstance(s, config_parser.IncludeStatement):
                try:
                    walk(str(resolve(s.filename)))
                except ConfigError:
                    pass
            elif isinstance(s, config_parser.BindingStatement):
                found[(s.scope or "", s.selector, s.arg_name or "")] = f"{path}:{s.location.line_num}"

    for path in loaded.files:
        walk(path)
    for b in loaded.top_level:
        if b.origin == "--gin_bindings":
            found[(b.scope, b.selector, b.param)] = "--gin_bindings"
    return found


def locate(loaded: LoadedConfig | None, selector: str, param: str, scope: str = "") -> str | None:
    """Where `selector.param` was bound (see binding_locations), matching a short or a module-qualified name."""
    if loaded is None:
        return None
    for (s_scope, s_selector, s_param), origin in reversed(list(binding_locations(loaded).items())):
        if s_param == param and s_scope == scope and _same_configurable(selector, s_selector):
            return origin
    return None


_PLAIN = (bool, int, float, str, type(None), list, tuple, dict)
_KINDS = {
    "int": (int,), "float": (int, float), "str": (str,), "bool": (bool,), "None": (type(None),),
    "list": (list, tuple), "tuple": (list, tuple), "Sequence": (list, tuple), "dict": (dict,),
}
_KIND_WORDS = {"int": "an integer", "float": "a number", "str": "a quoted string", "bool": "True or False",
               "None": "None", "list": "a list [...]", "tuple": "a list or tuple", "Sequence": "a list [...]",
               "dict": "a dict {...}"}


def expected_kinds(annotation: object, default: object) -> list[str] | None:
    """The kinds (keys of _KINDS) a parameter accepts, from its annotation or else its default; None: unknown."""
    if isinstance(annotation, str) and annotation:
        kinds = []
        for part in annotation.split("|"):
            head = part.strip().split("[", 1)[0]
            if head not in _KINDS:
                return None  # a class, Any, Callable...: not checked here
            kinds.append(head)
        return kinds
    if isinstance(default, bool):
        return ["bool"]
    if isinstance(default, int):
        return ["int"]
    if isinstance(default, float):
        return ["float"]
    if isinstance(default, str):
        return ["str"]
    return None


def _matches(value: object, kinds: list[str]) -> bool:
    for kind in kinds:
        allowed = _KINDS[kind]
        if isinstance(value, bool) and bool not in allowed:
            continue  # True is an int to Python, not to a config
        if isinstance(value, allowed):
            return True
    return False


def type_problem(selector: str, param: str, value: object, kinds: list[str], where: str | None) -> str:
    """One line: where, the binding, what it is, what it must be, and how to write it."""
    expected = " or ".join(_KIND_WORDS[k] for k in kinds)
    got = type(value).__name__
    hint = ""
    if isinstance(value, str) and any(k in ("int", "float") for k in kinds):
        try:
            number = float(value)
            hint = f"; write it without quotes: {selector}.{param} = {value.strip()}"
            if "float" not in kinds and not number.is_integer():
                hint = f"; write a whole number: {selector}.{param} = {int(number)}"
        except ValueError:
            hint = "; write a number"
    elif isinstance(value, float) and "int" in kinds and "float" not in kinds:
        hint = f"; write a whole number, e.g. {selector}.{param} = {int(value)}"
    elif "str" in kinds and not isinstance(value, str):
        hint = f"; quote it: {selector}.{param} = '{value}'"
    prefix = f"{where}: " if where else ""
    return f"{prefix}{selector}.{param} = {value!r} is a {got}, but it must be {expected}{hint}"


def check_value_types(loaded: LoadedConfig | None = None) -> None:
    """ConfigError for bound literal values of the wrong type (a quoted number, a float where an integer goes).

    Parameters are checked against their annotations (or defaults) in the registry; references, macros and
    parameters of unregistered or loosely typed components are left to the components.
    """
    names = set(registry.registered_names())
    problems = []
    for (scope, selector), values in gin.config._CONFIG.items():
        qualified = selector if selector in names else next((n for n in names if n.endswith("." + selector)), None)
        if qualified is None:
            continue
        fn = registry.get(qualified).target
        fn = fn.__init__ if inspect.isclass(fn) else fn
        try:
            signature = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        for param, value in values.items():
            if param not in signature or not isinstance(value, _PLAIN):
                continue
            p = signature[param]
            kinds = expected_kinds(p.annotation if p.annotation is not inspect.Parameter.empty else None,
                                   p.default if p.default is not inspect.Parameter.empty else None)
            if kinds is None or _matches(value, kinds):
                continue
            where = locate(loaded, qualified, param, scope)
            problems.append(type_problem(qualified, param, value, kinds, where))
    if problems:
        raise ConfigError("\n".join(problems))
