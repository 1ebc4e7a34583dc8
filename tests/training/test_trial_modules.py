"""training/trial/run.py's parts: config-time checks declared by component modules through the registry (the trial
imports no concrete component), and every part importable on its own."""

from __future__ import annotations

import ast
import importlib

import pytest

from tvrl_bench import registry
from tvrl_bench.config import PROJECT_ROOT, load_config
from tvrl_bench.training.trial.run import check_values

TRIAL_PARTS = ["trial", "trial_options", "trial_checks", "trial_build", "failed_runs", "media_hooks"]


@pytest.fixture
def no_config_checks(monkeypatch):
    """The declared checks set aside (their modules imported first, so they declare into the real list)."""
    registry.import_components()
    monkeypatch.setattr(registry, "_CONFIG_CHECKS", [])


def test_a_declared_config_check_runs_once_when_a_trial_checks_its_values(no_config_checks):
    seen = []

    @registry.config_check
    def check() -> None:
        seen.append("ran")

    registry.config_check(check)  # declared twice: still run once
    check_values(load_config(["components/profiles/toy.gin"]))
    assert seen == ["ran"]


def test_a_failing_config_check_stops_the_trial_with_its_error(no_config_checks):
    @registry.config_check
    def refuse() -> None:
        raise ValueError("prompts.csv, line 3: no")

    with pytest.raises(ValueError, match="prompts.csv, line 3: no"):
        check_values(load_config(["components/profiles/toy.gin"]))


def test_the_prompt_file_check_is_declared_by_its_component_module():
    registry.import_components()
    from tvrl_bench.datasets.files import check_bound_prompt_files

    assert check_bound_prompt_files in registry._CONFIG_CHECKS


@pytest.mark.parametrize("part", TRIAL_PARTS)
def test_no_trial_part_imports_a_concrete_component_module(part):
    importlib.import_module(f"tvrl_bench.training.{part}")
    path = PROJECT_ROOT / "tvrl_bench" / "training" / f"{part}.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    families = [f.package for f in registry.FAMILIES.values() if f.name != "training"]
    concrete = [m for m in imported if any(m.startswith(p + ".") for p in families) and not m.endswith(".base")]
    assert concrete == [], f"{path.name} imports {concrete}"
