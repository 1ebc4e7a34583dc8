"""`tvrl-bench list` through the installed console script."""

from __future__ import annotations

import subprocess

import pytest

from tests.support import console_script
from tvrl_bench import registry

pytestmark = pytest.mark.integration


def run(*args):
    return subprocess.run([console_script("tvrl-bench"), *args], capture_output=True, text=True, check=False)


def test_list_prints_every_family_and_component():
    result = run("list")
    assert result.returncode == 0, result.stderr
    registry.import_components()
    for family in registry.FAMILIES:
        assert f"\n{family}: " in "\n" + result.stdout
    for name in registry.registered_names():
        assert name in result.stdout
    assert "samplers.sage" in result.stdout and "eta = 0.5" in result.stdout


def test_list_one_family_and_reject_unknown():
    result = run("list", "credit")
    assert result.returncode == 0 and "credit.window" in result.stdout and "samplers.flow" not in result.stdout
    bad = run("list", "credits")
    assert bad.returncode != 0 and "invalid choice" in bad.stderr
