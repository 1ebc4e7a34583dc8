"""`operative_params` of a whole trial: the toy profile's params are the ones recorded when they were still read
from gin's private operative table (toy_operative_params.json), so reading the public operative config string
changed nothing that MLflow logs (the record gained the moving SDE window's three schedule options, logged with
their defaults, when they were added)."""

from __future__ import annotations

import json
from pathlib import Path

from tvrl_bench.config import load_config
from tvrl_bench.tracking.params import operative_params

RECORDED = Path(__file__).with_name("toy_operative_params.json")


def test_the_toy_profile_logs_the_recorded_params():
    from tvrl_bench.training.settings import TrialSettings

    load_config(["components/profiles/toy_v1.gin"], ["TRAIN_STEPS = 60", "training.trial.steps = %TRAIN_STEPS"])
    TrialSettings()  # what a trial builds
    params = operative_params()
    recorded = json.loads(RECORDED.read_text())
    recorded["training.trial.steps"] = "%TRAIN_STEPS"  # a macro-bound value is logged as the macro
    assert params == recorded
    assert params["training.schedule.sde_window"] == "(0, 2)" and params["policies.toy.train"] == "()"
    assert params["training.trial.schedule"] == "@training.schedule()"
    assert params["rewards.toy_oracle.component_values"] == "'soft'"
    assert not any("TRAIN_STEPS" in key or key.startswith("gin.") for key in params)  # macros are skipped


def recorded_profile(profile: str, recorded: str):
    """(the profile's TrialSettings, its operative params), the params checked equal to the recorded JSON file."""
    from tvrl_bench.training.settings import TrialSettings

    load_config([profile], [])
    settings = TrialSettings()
    params = operative_params()
    assert params == json.loads(RECORDED.with_name(recorded).read_text())
    return settings, params


def test_the_third_toy_profile_logs_its_recorded_params():
    """The toy_v3.gin regime: base v2_noisy_captions, DiffusionNFT with 3x3 window credit, lr 1e-4, the wide evaluation."""
    settings, params = recorded_profile("components/profiles/toy_v3.gin", "toy_v3_operative_params.json")
    assert params["policies.toy.base"] == "'v2_noisy_captions'" and params["training.optimizer.learning_rate"] == "0.0001"
    assert params["training.trial.wide_eval_prompts"] == "1000" and params["rewards.toy_oracle.shape_measure"] == "'component'"
    assert type(settings.objective).__name__ == "NegativeAwareFineTuning" and settings.credit.method == "TVRL"


def test_the_default_toy_profile_logs_its_recorded_params():
    """The default regime: the slot world's base, the official loss with one advantage per check and window credit."""
    settings, params = recorded_profile("components/profiles/toy.gin", "toy_default_operative_params.json")
    assert params["policies.toy.base"] == "'slots'" and params["training.optimizer.learning_rate"] == "5e-05"
    assert params["objectives.tvrl_official.mode"] == "'question'" and params["objectives.tvrl_official.kl"] == "'none'"
    assert params["training.trial.wide_eval_prompts"] == "1000" and settings.dataset.name == "toy-slots"
    assert type(settings.objective).__name__ == "OfficialTVRL" and settings.credit.method == "TVRL"
