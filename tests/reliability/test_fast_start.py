"""`--help` and `tvrl-bench list` answer at once: no script imports torch (or a component) before it has parsed
its arguments; the listing is read from source (tests/cli/test_list.py holds it to the registry's own). How long
they take is measured by benchmarks/cli_start.py, not asserted here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.reliability.helpers import ROOT

pytestmark = pytest.mark.integration

COMMANDS = [
    ("tvrl_bench.cli.train", ["--help"]),
    ("tvrl_bench.cli.sweep", ["--help"]),
    ("tvrl_bench.cli.report", ["--help"]),
    ("tvrl_bench.cli.main", ["--help"]),
    ("tvrl_bench.cli.main", ["list"]),
    ("tvrl_bench.cli.main", ["prepare-toy", "--help"]),
]


@pytest.mark.parametrize("module, args", COMMANDS, ids=[" ".join([m.rsplit(".", 1)[1], *a]) for m, a in COMMANDS])
def test_help_and_list_import_no_torch(module, args):
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", module, *args], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    heavy = sorted(m for m in imported if m.split(".")[0] in {"torch", "mlflow", "pandas", "diffusers", "transformers"})
    assert not heavy, f"{module} {' '.join(args)} imported {heavy[:5]}"
