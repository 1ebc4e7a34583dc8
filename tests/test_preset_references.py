"""Every preset, profile and study file names only presets that exist: a path (`components/objectives/tvrl_video.gin`)
must be a file of the checkout, a bare file name (`tvrl_question.gin`) the name of a file under components/ or
sweeps/. A comment that sends people to a renamed or never-written preset (the scalar scorer's once named
`components/objectives/tvrl.gin`) fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GIN_FILES = sorted([*(ROOT / "components").rglob("*.gin"), *(ROOT / "sweeps").rglob("*.gin")])
PATH = re.compile(r"(?<![\w/.-])((?:components|sweeps)/[\w/.-]+\.gin)")
BARE = re.compile(r"(?<![\w/.-])(\w+\.gin)")
NAMES = {p.name for p in GIN_FILES}


def test_the_gin_files_are_found():
    assert len(GIN_FILES) > 50 and "toy_scorer_slots.gin" in NAMES


@pytest.mark.parametrize("gin_file", GIN_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_gin_file_names_only_presets_that_exist(gin_file):
    text = gin_file.read_text(encoding="utf-8")
    missing = [p for p in PATH.findall(text) if not (ROOT / p).is_file()]
    missing += [n for n in BARE.findall(text) if n not in NAMES]
    assert not missing, f"{gin_file.relative_to(ROOT)} names presets that do not exist: {missing}"
