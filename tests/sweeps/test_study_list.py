"""docs/sweeps.md lists every study file of sweeps/ and sweeps/experiments/ in one of its tables, with the profile
the study file names, so the list cannot drift from the files again."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "sweeps.md"
STUDIES = sorted(p for p in (ROOT / "sweeps").rglob("*.gin") if "sweeps.study." in p.read_text(encoding="utf-8"))
PROFILE = re.compile(r"^sweeps\.study\.profile\s*=\s*'([^']+)'", re.MULTILINE)


def listed() -> dict[str, list[str]]:
    """{study file: the cells of its row} for every table row of docs/sweeps.md that starts with a study file."""
    rows = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `sweeps/") and cells[0].strip("`").endswith(".gin"):
            rows[cells[0].strip("`")] = cells
    return rows


def test_every_study_file_is_listed_with_its_profile():
    rows = listed()
    assert STUDIES, "no study files found"
    for study in STUDIES:
        name = study.relative_to(ROOT).as_posix()
        assert name in rows, f"docs/sweeps.md does not list {name}; add a row with its trials, profile and table"
        profile = PROFILE.search(study.read_text(encoding="utf-8")).group(1)
        assert f"`{Path(profile).name}`" in rows[name], f"docs/sweeps.md lists {name} without its profile {profile}"


def test_every_listed_study_exists():
    for name in listed():
        assert (ROOT / name).is_file(), f"docs/sweeps.md lists {name}, which does not exist; remove its row"
