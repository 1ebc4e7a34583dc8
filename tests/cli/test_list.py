"""`tvrl-bench list`: read from the components' source (cli/static_listing.py), the one way it knows the registry,
and held here to the registry's own descriptions and parameters; through the installed console script too."""

from __future__ import annotations

import inspect
import subprocess

import gin
import pytest

from tests.support import console_script
from tvrl_bench import registry
from tvrl_bench.cli.list_components import render
from tvrl_bench.cli.static_listing import scan


def run(*args):
    return subprocess.run([console_script("tvrl-bench"), *args], capture_output=True, text=True, check=False)


def _default(value: object) -> str:
    return "REQUIRED" if value is inspect.Parameter.empty or value is gin.REQUIRED else repr(value)


def test_the_listing_read_from_source_is_the_registrys():
    """Every registered component, its first docstring line and its parameters with their defaults (the
    registry's constructor rule), as importing the components gives them."""
    registry.import_components()
    read = {c.qualified_name: (c.description, list(c.parameters))
            for c in scan([f.package for f in registry.FAMILIES.values()])}
    imported = {c.qualified_name: (c.description, [(name, _default(value)) for name, value in c.parameters()])
                for c in registry.components()}
    assert read == imported


def test_the_listing_prints_a_family_with_its_components_and_defaults():
    text = render("samplers")
    assert text.startswith("samplers: ") and "\n  samplers.sage" in text and "\n      eta = 0.5\n" in text
    assert "credit.window" not in text


@pytest.mark.integration
def test_list_prints_every_family_and_component():
    result = run("list")
    assert result.returncode == 0, result.stderr
    registry.import_components()
    for family in registry.FAMILIES:
        assert f"\n{family}: " in "\n" + result.stdout
    for name in registry.registered_names():
        assert name in result.stdout
    assert "samplers.sage" in result.stdout and "eta = 0.5" in result.stdout


@pytest.mark.integration
def test_list_one_family_and_reject_unknown():
    result = run("list", "credit")
    assert result.returncode == 0 and "credit.window" in result.stdout and "samplers.flow" not in result.stdout
    bad = run("list", "credits")
    assert bad.returncode != 0 and "invalid choice" in bad.stderr
