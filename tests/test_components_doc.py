"""docs/components.md's table of registered components agrees with the registry: every registered component is
named (in backticks) in its family's row, and every backticked name in a row is a component of that family, its
qualified gin name (`credit.feature_map`), or a preset file of the family (components/<family>/ or beside the
experiment records, sweeps/experiments/<family>/). A new component without its line, or a line left behind by a
removed one, fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tvrl_bench import registry

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "components.md"
NAME = re.compile(r"`([^`]+)`")


def table_rows(text: str) -> dict[str, list[str]]:
    """{family: the backticked names of its row's components cell} for every row of the page's table."""
    rows = {}
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        for family in NAME.findall(cells[0]):
            rows[family] = NAME.findall(cells[-1])
    return rows


def presets(family: str) -> set[str]:
    folders = [ROOT / "components" / family, ROOT / "sweeps" / "experiments" / family]
    return {p.stem for folder in folders for p in folder.glob("*.gin")}


@pytest.fixture(scope="module")
def rows() -> dict[str, list[str]]:
    return table_rows(PAGE.read_text(encoding="utf-8"))


def test_the_table_reader_reads_rows_and_names():
    text = "| family | macro | components |\n|---|---|---|\n| `a`, `b` | `X` | `one` (with `two`), `a.three` |\n"
    assert table_rows(text) == {"a": ["one", "two", "a.three"], "b": ["one", "two", "a.three"]}


registry.import_components()
FAMILIES = sorted({component.family for component in registry.components()})


@pytest.mark.parametrize("family", FAMILIES)
def test_every_registered_component_is_in_its_family_row(family, rows):
    assert family in rows, f"docs/components.md has no row for the family `{family}`"
    missing = sorted(c.name for c in registry.components(family) if c.name not in rows[family])
    assert not missing, f"docs/components.md's `{family}` row does not name {missing}; add each with a few words"


@pytest.mark.parametrize("family", FAMILIES)
def test_every_name_in_a_row_is_a_component_or_a_preset_of_the_family(family, rows):
    names = {c.name for c in registry.components(family)}
    known = names | {f"{family}.{n}" for n in names} | presets(family)
    other = {f"{c.family}.{c.name}" for c in registry.components()}  # another family's component, qualified
    unknown = sorted(n for n in rows.get(family, []) if re.fullmatch(r"[\w.]+", n) and n not in known | other)
    assert not unknown, f"docs/components.md's `{family}` row names {unknown}, which `{family}` does not register"
