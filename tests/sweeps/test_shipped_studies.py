"""Every study shipped in sweeps/ plans without an error: its presets, bindings and tables exist and every trial's
config parses, so a study a README or a docs page tells people to run cannot be broken by a rename."""

from __future__ import annotations

from pathlib import Path

import pytest

from tvrl_bench.sweeps.driver import SweepOptions, plan, trial_command

STUDIES = sorted((Path(__file__).resolve().parents[2] / "sweeps").glob("*.gin"))


def test_the_shipped_studies_are_found():
    assert {"quickstart", "power", "samplers", "credit", "rewards", "middle_window"} <= {p.stem for p in STUDIES}


@pytest.mark.parametrize("study_file", STUDIES, ids=lambda p: p.stem)
def test_a_shipped_study_plans(study_file, tmp_path):
    study, trials = plan(str(study_file), SweepOptions(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}", out_dir=str(tmp_path)))
    assert study.name == study_file.stem and trials
    assert len({t.key for t in trials}) == len(trials)  # no two trials of a study are the same config


OBJECTIVES = ["grpo", "nft", "awm", "grpo_guard", "dpo"]


@pytest.mark.skipif(not all((STUDIES[0].parents[1] / "components" / "objectives" / f"{o}.gin").is_file()
                            for o in OBJECTIVES), reason="the objective presets are not all written yet")
def test_the_objectives_study_is_a_base_per_seed_and_every_objective_with_both_credits(tmp_path):
    options = SweepOptions(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}", out_dir=str(tmp_path))
    study, trials = plan(str(STUDIES[0].parent / "objectives.gin"), options)
    assert study.tables == ["objectives"]
    assert sorted(t.seed for t in trials if t.base) == [0, 1, 2]
    trained = sorted((t.labels["objective"], t.labels["credit"], t.seed) for t in trials if not t.base)
    assert trained == sorted((o, c, s) for o in OBJECTIVES for c in ("uniform", "window3") for s in (0, 1, 2))
    # each trial logs its objective and credit presets as params (tvrl-train --label), the table's rows
    args = trial_command(trials[-1], study, options, "parent", 1, tmp_path).args
    assert [args[i + 1] for i, a in enumerate(args) if a == "--label"] == ["objective=dpo", "credit=window3"]
