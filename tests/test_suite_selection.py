"""Which tests run: plain `pytest` is the unit loop (tests marked `integration` left out, pyproject.toml's addopts);
the README's test command, which .ci/run runs word for word, selects every test."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EVERY_TEST = "-m 'integration or not integration'"


def readme_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"Run the tests:\s*```bash\n(.+?)\n```", text, re.DOTALL)
    assert block, "README.md has no 'Run the tests:' block"
    return block.group(1).strip()


def test_ci_runs_the_readmes_test_command_and_it_selects_every_test():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert lines[-1] == readme_command()
    assert readme_command().endswith(f"python -m pytest -n 2 --dist loadgroup {EVERY_TEST}")


def collected(*args: str) -> list[str]:
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                             "tests/cli/test_list.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return [line for line in result.stdout.splitlines() if "::" in line]


@pytest.mark.integration  # two pytest processes: seconds
def test_plain_pytest_is_the_unit_loop_and_the_readmes_marker_selects_all():
    """tests/cli/test_list.py holds both kinds: the unit loop leaves its console-script tests out."""
    unit, every = collected(), collected(*shlex.split(EVERY_TEST))
    assert unit and set(unit) < set(every)
    assert {test.split("::")[1] for test in set(every) - set(unit)} == {
        "test_list_prints_every_family_and_component", "test_list_one_family_and_reject_unknown"}
