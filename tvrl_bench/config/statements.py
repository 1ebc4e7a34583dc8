"""The binding statements of config files read without resolving any name: what was bound, and where."""

from __future__ import annotations

import functools
import tokenize
from pathlib import Path
from dataclasses import dataclass, field

from gin import config_parser

from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.paths import PROJECT_ROOT, read_config_text, resolve


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
    # (scope, component, parameter) -> the component whose binding it took (config/inherited.py)
    inherited: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def config_text(self) -> str:
        """The files and bindings as one gin text, so a worker process can re-parse exactly this config."""
        lines = [f"include '{f}'" for f in self.files] + list(self.bindings)
        return "\n".join(lines) + "\n"


def same_configurable(recorded: str, written: str) -> bool:
    return recorded == written or recorded.endswith("." + written)


class ListingDelegate(config_parser.ParserDelegate):
    """Lets the gin parser walk a file to list its statements without resolving any name."""

    def configurable_reference(self, scoped_name: str, evaluate: bool) -> str:
        return scoped_name

    def macro(self, macro_name: str) -> str:
        return macro_name


def binding_statements(text: str, origin: str) -> list[Binding]:
    try:
        statements = list(config_parser.ConfigParser(text, ListingDelegate()))
    except SyntaxError as exc:
        raise ConfigError(syntax_message(exc, origin)) from None
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


def syntax_message(exc: SyntaxError, origin: str) -> str:
    where = origin if origin == "--gin_bindings" else f"{exc.filename or origin}:{exc.lineno}"
    return f"{where}: gin syntax error: {exc.msg}\n    {(exc.text or '').rstrip()}"



def binding_locations(loaded: LoadedConfig) -> dict[tuple[str, str, str], str]:
    """(scope, selector, param) -> "file.gin:LINE" (or "--gin_bindings") of the binding gin applied last.

    Computed once per config (kept on `loaded` while its files and bindings stay the same): a study's plan asks
    where each of thousands of values was bound."""
    key = (tuple(loaded.files), tuple(loaded.bindings))
    cached = getattr(loaded, "_binding_locations", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    found: dict[tuple[str, str, str], str] = {}
    seen: set[str] = set()

    def read(text: str, origin: str | None) -> None:
        """Record the bindings of a file's (or the command line's, origin None) text; follow its includes."""
        for kind, *rest in _listed_statements(text):
            if kind == "include":
                try:
                    walk(str(resolve(rest[0])))
                except ConfigError:
                    pass
            else:
                scope, selector, param, line = rest
                found[(scope, selector, param)] = f"{origin}:{line}" if origin else "--gin_bindings"

    def walk(path: str) -> None:
        if path in seen:  # gin would stop on a cycle; here it only must not loop
            return
        seen.add(path)
        try:
            read(read_config_text(path), path)
        except (OSError, ConfigError):
            return

    for path in loaded.files:
        walk(path)
    for text in loaded.bindings:  # in order: an `include` there binds its file's values at their lines
        read(text, None)
    object.__setattr__(loaded, "_binding_locations", (key, found))
    return found


@functools.lru_cache(maxsize=1024)
def _listed_statements(text: str) -> tuple[tuple, ...]:
    """A gin text's include and binding statements, in order: ("include", filename) or ("bind", scope, selector,
    param, line); () when it does not parse (the loader reports that). Cached by text: the files of a study's
    trials are the same few presets, parsed once."""
    try:
        statements = list(config_parser.ConfigParser(text, ListingDelegate()))
    except (SyntaxError, tokenize.TokenError):
        return ()
    listed: list[tuple] = []
    for s in statements:
        if isinstance(s, config_parser.IncludeStatement):
            listed.append(("include", s.filename))
        elif isinstance(s, config_parser.BindingStatement):
            listed.append(("bind", s.scope or "", s.selector, s.arg_name or "", s.location.line_num))
    return tuple(listed)


def short_origin(origin: str) -> str:
    """A binding's origin as a line shows it: a file under the current folder or this checkout relative to it
    ("components/profiles/toy.gin:22"), others as they are."""
    path, colon, line = origin.rpartition(":")
    if not colon or not line.isdigit():
        return origin
    for root in (Path.cwd(), PROJECT_ROOT):
        try:
            return f"{Path(path).relative_to(root)}:{line}"
        except ValueError:
            continue
    return origin


def locate(loaded: LoadedConfig | None, selector: str, param: str, scope: str = "") -> str | None:
    """Where `selector.param` was bound (see binding_locations), matching a short or a module-qualified name."""
    if loaded is None:
        return None
    for (s_scope, s_selector, s_param), origin in reversed(list(binding_locations(loaded).items())):
        if s_param == param and s_scope == scope and same_configurable(selector, s_selector):
            return origin
    return None
