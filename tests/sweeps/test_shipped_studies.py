"""Every study shipped in sweeps/ and its subfolders (the experiment records in sweeps/experiments/) plans without an
error: its presets, bindings and tables exist and every trial's config parses, so a study a README or a docs page
tells people to run cannot be broken by a rename; the presets kept beside the experiment records load too."""

from __future__ import annotations

import subprocess
from pathlib import Path

import gin
import pytest

from tests.support import console_script
from tvrl_bench import config as gin_config
from tvrl_bench.sweeps.driver import SweepOptions, plan, trial_command
from tvrl_bench.sweeps.plan import check_trial_config

ROOT = Path(__file__).resolve().parents[2]
# a study file binds sweeps.study; the other .gin files under sweeps/ are presets kept beside their studies
STUDIES = sorted(p for p in (ROOT / "sweeps").rglob("*.gin") if "sweeps.study." in p.read_text(encoding="utf-8"))
EXPERIMENT_PRESETS = sorted(p for p in (ROOT / "sweeps").rglob("*.gin") if p not in STUDIES)


def test_the_shipped_studies_are_found():
    assert {"quickstart", "power", "samplers", "credit", "rewards", "objectives"} <= {
        p.stem for p in STUDIES if p.parent.name == "sweeps"}
    assert {"middle_window", "toy_v2", "power_v2", "power_v2_kl"} <= {
        p.stem for p in STUDIES if p.parent.name == "experiments"}
    assert {p.stem for p in EXPERIMENT_PRESETS} >= {"nft_kl", "nft_null_kl", "nft_shared", "nft_null_shared"}


@pytest.mark.parametrize("study_file", STUDIES, ids=lambda p: p.relative_to(ROOT / "sweeps").with_suffix("").as_posix())
def test_a_shipped_study_plans(study_file, tmp_path):
    study, trials = plan(str(study_file), SweepOptions(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}", out_dir=str(tmp_path)))
    assert study.name == study_file.stem and trials
    assert len({t.key for t in trials}) == len(trials)  # no two trials of a study are the same config


# (objective, credits) of the objectives study: every registered objective with token credit, its null control where
# it has one, and uniform credit beside the three objectives of one advantage per video the paper compares most
OBJECTIVES = {"tvrl_question": ("window3",), "tvrl_question_null": ("window3",), "tvrl_official": ("window3", "uniform"),
              "tvrl_official_null": ("window3",), "grpo": ("window3", "uniform"), "null_within_groups": ("window3",),
              "per_token": ("window3",), "grpo_guard": ("window3",), "nft": ("window3", "uniform"),
              "nft_null": ("window3",), "awm": ("window3",), "dpo": ("window3",), "best_of_n": ("window3",),
              "best_of_n_null": ("window3",)}


def test_the_objectives_study_is_a_base_per_seed_and_every_objective_with_token_credit(tmp_path):
    from tvrl_bench import registry

    options = SweepOptions(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}", out_dir=str(tmp_path))
    study, trials = plan(str(ROOT / "sweeps" / "objectives.gin"), options)
    assert study.tables == ["objectives"] and study.profile.endswith("components/profiles/toy.gin")
    # the grid of its most stages: 3 stages of 5 seeds (stage k runs seeds 5(k-1)..5k-1 for the arms still open)
    assert sorted(t.seed for t in trials if t.base) == list(range(15))
    assert study.decide["baseline"] == {"objective": "tvrl_question", "credit": "window3"}
    trained = sorted((t.labels["objective"], t.labels["credit"], t.seed) for t in trials if not t.base)
    assert trained == sorted((o, c, s) for o, credits in OBJECTIVES.items() for c in credits for s in range(15))
    registry.import_components()

    def text_of(preset: Path) -> str:  # a preset with the presets it includes
        text = preset.read_text(encoding="utf-8")
        included = [ROOT / line.split("'")[1] for line in text.splitlines() if line.startswith("include '")]
        return text + "".join(text_of(p) for p in included)

    ran = "".join(text_of(ROOT / "components" / "objectives" / f"{o}.gin") for o in OBJECTIVES)
    for component in registry.components("objectives"):  # every registered objective runs in the study
        assert f"OBJECTIVE = @objectives.{component.name}()" in ran, component.name
    # each trial logs its objective and credit presets as params (tvrl-train --label), the table's rows
    args = trial_command(trials[-1], study, options, "parent", 1, tmp_path).args
    labels = [args[i + 1] for i, a in enumerate(args) if a == "--label"]
    assert labels[0].startswith("objective=") and labels[1].startswith("credit=")


@pytest.mark.parametrize("preset", EXPERIMENT_PRESETS, ids=lambda p: p.relative_to(ROOT / "sweeps").as_posix())
def test_a_preset_kept_beside_the_experiments_loads_on_its_profile(preset):
    """nft_shared and its null control run in no study (rejected before any trial): they still parse and check, on
    the v2 profile; the vivid dose study's critics (experiments/rewards/) answer slot-world checks: on toy.gin."""
    profile = "toy.gin" if preset.parent.name == "rewards" else "toy_v2.gin"
    try:
        check_trial_config(gin_config.load_config([f"components/profiles/{profile}", str(preset)], []))
    finally:
        gin.clear_config()


def test_a_study_names_a_preset_kept_beside_it_by_its_name(tmp_path):
    """power_v2_kl's axis names nft_kl, found in sweeps/experiments/objectives/; its runs are labelled by name."""
    options = SweepOptions(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}", out_dir=str(tmp_path))
    study, trials = plan(str(ROOT / "sweeps" / "experiments" / "power_v2_kl.gin"), options)
    trained = [t for t in trials if not t.base]
    assert {Path(f).as_posix().split("sweeps/", 1)[-1] for t in trained for f in t.files if "nft" in f} == {
        "experiments/objectives/nft_kl.gin", "experiments/objectives/nft_null_kl.gin"}
    args = trial_command(trained[-1], study, options, "parent", 1, tmp_path).args
    assert [args[i + 1] for i, a in enumerate(args) if a == "--label"] == ["objective=nft_null_kl", "credit=window3"]


@pytest.mark.integration
def test_tvrl_sweep_dry_runs_an_experiment_record_from_another_folder(tmp_path):
    """The console script finds the study and the presets beside it through the checkout, from any folder."""
    result = subprocess.run(
        [console_script("tvrl-sweep"), "sweeps/experiments/power_v2_kl.gin", "--dry-run", "--no-progress",
         "--tracking-uri", f"sqlite:///{tmp_path / 'm.db'}", "--out", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "objective=nft_null_kl credit=window3 seed=14" in result.stdout
