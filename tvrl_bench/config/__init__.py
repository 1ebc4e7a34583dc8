"""Gin configs: finding files, loading them with clear errors, where each binding was written, value checks.

    paths.py       search paths and `resolve` (cwd, $TVRL_BENCH_PATH, the checkout)
    loading.py     `load_config`, `check_unused`, gin errors rewritten as FILE:LINE messages, captured configs
    statements.py  binding statements read without resolving names; `locate` a binding's file and line
    values.py      bound literals checked against component signatures; `check_safe_name`
    rules.py       how a component declares its valid values (`CHECKS = Checks(...)`): rules and relations
    rule_kinds.py  `Rule` and its builders (`number`, `integer`, `one_of`, ...)
    component_checks.py  the declared checks run on the parsed config, each problem at its FILE:LINE
    inherited.py   a null control takes its objective's bindings (one rule for every null control)
    renamed.py     parameters that moved: an old binding's error names the new one
    errors.py      `ConfigError`, the one error every config problem raises (its FILE:LINE and the fix)
    operative.py   the operative config (what the run's configurables were called with), read through gin's API
    trial_components.py  the components a parsed config's trial builds, read from the config alone
    takes_effect.py  `takes_effect_when`: a setting its mode leaves unused is refused where it was bound
    trial_fit.py   a trial's objective reads only what its critic gives (an answer per check, or not)
"""

from tvrl_bench.config.component_checks import check_components
from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.loading import captured_configs, check_unused, load_config
from tvrl_bench.config.paths import PATH_ENV, PROJECT_ROOT, resolve, search_paths
from tvrl_bench.config.statements import Binding, LoadedConfig, binding_locations, locate
from tvrl_bench.config.rules import Checks, Relation, Rule, RuleError, declared_checks
from tvrl_bench.config.values import check_safe_name, check_value_types

__all__ = [
    "PATH_ENV", "PROJECT_ROOT", "Binding", "Checks", "ConfigError", "LoadedConfig", "Relation", "Rule", "RuleError",
    "binding_locations", "captured_configs", "check_components", "check_safe_name", "check_unused",
    "check_value_types", "declared_checks", "load_config", "locate", "resolve", "search_paths",
]
