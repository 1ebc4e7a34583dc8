"""Every study shipped in sweeps/ plans without an error: its presets, bindings and tables exist and every trial's
config parses, so a study a README or a docs page tells people to run cannot be broken by a rename."""

from __future__ import annotations

from pathlib import Path

import pytest

from tvrl_bench.sweeps.driver import SweepOptions, plan

STUDIES = sorted((Path(__file__).resolve().parents[2] / "sweeps").glob("*.gin"))


def test_the_shipped_studies_are_found():
    assert {"quickstart", "power", "samplers", "credit", "rewards", "middle_window"} <= {p.stem for p in STUDIES}


@pytest.mark.parametrize("study_file", STUDIES, ids=lambda p: p.stem)
def test_a_shipped_study_plans(study_file, tmp_path):
    study, trials = plan(str(study_file), SweepOptions(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}", out_dir=str(tmp_path)))
    assert study.name == study_file.stem and trials
    assert len({t.key for t in trials}) == len(trials)  # no two trials of a study are the same config
