"""The names of the toy regimes cannot drift from the files that define them.

- docs/sweeps.md lists every study file of sweeps/ and sweeps/experiments/ in one of its tables, with the profile the
  study file names and the base (`policies.toy.base`) that profile and the study's bindings give its trials.
- docs/toy/overview.md opens on the table of regimes: one row per toy profile, each row's base the one its profile
  binds, its studies the study files that run that profile, and the default regime's row the profile the shipped
  studies run (components/profiles/toy.gin) with its base.
- The README's first screen (its "Set up and run" section) names the quickstart study's profile and no other, and
  no base but that profile's.

Bases are read through gin (the profile, then the study's bindings), as a trial reads them."""

from __future__ import annotations

import ast
import inspect
import re
from functools import cache
from pathlib import Path

import gin
import pytest

from tvrl_bench.config import load_config
from tvrl_bench.policies.toy_bases import SHIPPED_BASES

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "sweeps.md"
OVERVIEW = ROOT / "docs" / "toy" / "overview.md"
README = ROOT / "README.md"
DEFAULT_PROFILE = "components/profiles/toy.gin"
TOY_PROFILES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "components" / "profiles").glob("toy*.gin"))
STUDIES = sorted(p for p in (ROOT / "sweeps").rglob("*.gin") if "sweeps.study." in p.read_text(encoding="utf-8"))
PROFILE = re.compile(r"^sweeps\.study\.profile\s*=\s*'([^']+)'", re.MULTILINE)
BINDINGS = re.compile(r"^sweeps\.study\.bindings\s*=\s*(\[.*?\])", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"`([^`]+)`")


def profile_of(study: Path) -> str:
    return PROFILE.search(study.read_text(encoding="utf-8")).group(1)


def base_of(profile: str, bindings: tuple[str, ...] = ()) -> str:
    """`policies.toy.base` as a trial of `profile` with `bindings` gets it: bound, or the policy's own default."""
    load_config([profile], list(bindings))
    try:
        return gin.query_parameter("policies.toy.base")
    except ValueError:
        from tvrl_bench.policies.toy import ToyPolicy

        return inspect.signature(ToyPolicy.__init__).parameters["base"].default
    finally:
        gin.clear_config()


@cache
def study_base(study: Path) -> str:
    found = BINDINGS.search(study.read_text(encoding="utf-8"))
    bindings = tuple(ast.literal_eval(found.group(1))) if found else ()
    return base_of(profile_of(study), tuple(b for b in bindings if b.startswith("policies.toy.base")))


def table_rows(text: str, first_header: str) -> list[dict[str, str]]:
    """The rows of every Markdown table whose first header cell is `first_header`, as {header: cell}."""
    rows, header = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells if cells[0] == first_header else []
        elif header and not set(line) <= set("|-: "):
            rows.append(dict(zip(header, cells)))
    return rows


def named(cell: str) -> list[str]:
    return CODE.findall(cell)


def listed() -> dict[str, dict[str, str]]:
    """{study file: its row} for every row of docs/sweeps.md's study and experiment-record tables."""
    text = PAGE.read_text(encoding="utf-8")
    rows = table_rows(text, "study") + table_rows(text, "experiment record")
    return {named(row[next(iter(row))])[0]: row for row in rows}


def regimes() -> list[dict[str, str]]:
    return table_rows(OVERVIEW.read_text(encoding="utf-8"), "regime")


def test_every_study_file_is_listed_with_its_profile_and_base():
    rows = listed()
    assert STUDIES, "no study files found"
    for study in STUDIES:
        name = study.relative_to(ROOT).as_posix()
        assert name in rows, f"docs/sweeps.md does not list {name}; add a row with its trials, profile, base and table"
        profile = profile_of(study)
        assert named(rows[name]["profile"]) == [Path(profile).name], (
            f"docs/sweeps.md lists {name} with profile {rows[name]['profile']}; the study runs {profile}")
        assert named(rows[name]["base"]) == [study_base(study)], (
            f"docs/sweeps.md lists {name} with base {rows[name]['base']}; its trials start from "
            f"`{study_base(study)}` (policies.toy.base of {profile} and the study's bindings)")


def test_every_listed_study_exists():
    for name in listed():
        assert (ROOT / name).is_file(), f"docs/sweeps.md lists {name}, which does not exist; remove its row"


def test_the_overview_opens_on_the_table_of_regimes():
    text = OVERVIEW.read_text(encoding="utf-8")
    first_table = next(line for line in text.splitlines() if line.startswith("|"))
    assert first_table.startswith("| regime | profile | world | base"), (
        "docs/toy/overview.md must open on the table of regimes (regime | profile | world | base | studies | "
        f"measured result); its first table starts {first_table!r}")
    profiles = [named(row["profile"])[0] for row in regimes()]
    assert sorted(profiles) == TOY_PROFILES, (
        f"docs/toy/overview.md's table of regimes has the profiles {profiles}; it needs one row per toy profile, "
        f"{TOY_PROFILES}")


@pytest.mark.parametrize("row", regimes(), ids=lambda row: named(row["profile"])[0])
def test_each_regime_row_names_its_profiles_base_and_studies(row):
    profile = named(row["profile"])[0]
    base = named(row[next(k for k in row if k.startswith("base"))])[0]
    assert base == base_of(profile), (
        f"docs/toy/overview.md: the regime of {profile} names base `{base}`; the profile binds "
        f"policies.toy.base = '{base_of(profile)}'")
    runs = {s.relative_to(ROOT).as_posix() for s in STUDIES if profile_of(s) == profile}
    shown = {p.relative_to(ROOT).as_posix() for pattern in named(row["studies"]) for p in ROOT.glob(pattern)}
    assert shown == runs, (
        f"docs/toy/overview.md: the regime of {profile} lists the studies {sorted(shown)}; the study files that run "
        f"it are {sorted(runs)}")
    if "default" in row["regime"]:
        assert profile == DEFAULT_PROFILE, (
            f"docs/toy/overview.md calls the regime of {profile} the default; the default profile is {DEFAULT_PROFILE}")


def test_the_overview_has_one_default_regime():
    defaults = [named(row["profile"])[0] for row in regimes() if "default" in row["regime"]]
    assert defaults == [DEFAULT_PROFILE], f"docs/toy/overview.md's default regimes: {defaults}; one, {DEFAULT_PROFILE}"


def test_the_readme_quickstart_names_the_quickstart_profile_and_its_base():
    text = README.read_text(encoding="utf-8")
    first_screen = text.split("## Set up and run", 1)[1].split("\n## ", 1)[0]
    prose = re.sub(r"```.*?```", "", first_screen, flags=re.DOTALL)  # code spans pair up outside fenced blocks
    quickstart = ROOT / "sweeps" / "quickstart.gin"
    profile = profile_of(quickstart)
    profiles = set(re.findall(r"components/profiles/\w+\.gin", first_screen))
    assert profiles == {profile}, (
        f"README.md's 'Set up and run' names the profiles {sorted(profiles)}; the quickstart runs {profile}")
    bases = {word for word in named(prose) if word in SHIPPED_BASES}
    assert bases <= {study_base(quickstart)}, (
        f"README.md's 'Set up and run' names the bases {sorted(bases)}; the quickstart starts from "
        f"`{study_base(quickstart)}`")
