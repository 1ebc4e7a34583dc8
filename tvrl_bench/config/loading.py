"""Loading gin configs: search paths, command-line bindings, clear errors, and the captured configs.

`load_config(files, bindings)` parses config files and `--gin_bindings` into gin's global config after
importing every component module. Names are resolved against the registry, so a typo fails at parse time with
the file, the line and the closest registered names. A null control then takes its objective's bindings
(config/inherited.py). After the trial has built its components,
`check_unused(loaded)` rejects bindings (from the top-level files or the command line) that nothing used.
Included presets are exempt: a profile includes default presets that a later file may swap out.
"""

from __future__ import annotations

import os
import re

import importlib.util  # noqa: F401  (gin 0.5 needs it imported before an include path can fail)

import gin

from tvrl_bench import registry
from tvrl_bench.config.component_checks import check_components, checked_components
from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.inherited import inherit_bindings
from tvrl_bench.config.operative import called_configurables
from tvrl_bench.config.paths import PATH_ENV, install_search_paths, read_config_text, resolve, search_paths
from tvrl_bench.config.renamed import renamed_message
from tvrl_bench.config.statements import (
    LoadedConfig,
    binding_statements,
    same_configurable,
    syntax_message,
)
from tvrl_bench.config.values import check_macros, check_value_types


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
    install_search_paths()
    bindings = list(bindings or [])
    resolved = [str(resolve(f)) for f in files]
    loaded = LoadedConfig(files=resolved, bindings=bindings)
    for path in resolved:
        text = read_config_text(path)
        loaded.top_level += binding_statements(text, origin=path)
        parsed = _parse(lambda: gin.parse_config_file(path))
        loaded.parsed_files += _flatten_includes(parsed)
    for text in bindings:
        loaded.top_level += binding_statements(text, origin="--gin_bindings")
        includes, _ = _parse(lambda: gin.parse_config(text), binding=text)
        for nested in includes:
            loaded.parsed_files += _flatten_includes(nested)
    loaded.inherited = inherit_bindings(checked_components()[1])  # the components the config refers to
    check_value_types(loaded)
    check_macros(loaded)
    check_components(loaded)  # every component's declared checks (config/rules.py), before anything is built
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
    called = called_configurables()
    problems = []
    for b in loaded.top_level:
        if b.selector == "gin.macro" or not b.param:
            continue
        used = any(
            same_configurable(selector, b.selector) and (not b.scope or b.scope in scope.split("/"))
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



_UNKNOWN = re.compile(r"No configurable matching (?:reference )?'@?([\w./]+?)(?:\(\))?'")
_NO_PARAM = re.compile(r"Configurable '([\w.]+)' doesn't have a parameter named '(\w+)'")
_LOCATION = re.compile(r'In file "(.+?)", line (\d+)')
_NO_FILE = re.compile(r"Unable to open file: (\S+?)\. Searched config paths")


def _parse(parse, binding: str | None = None):
    try:
        return parse()
    except ConfigError as exc:  # names its place already (an included file that is not UTF-8)
        message = str(exc)
        included = [f"{f}:{n}" for f, n in _LOCATION.findall(message)]
        first = message.splitlines()[0]
        raise ConfigError(first + (f" (included from {' <- '.join(included)})" if included else "")) from None
    except SyntaxError as exc:
        raise ConfigError(syntax_message(exc, "--gin_bindings" if binding else "")) from None
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
        if moved := renamed_message(selector, param):
            return f"{where}: {moved}"
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
