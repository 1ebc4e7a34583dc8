"""How a study looks in `mlflow ui`: experiments open on their training runs, trial runs are named by axis values."""

from __future__ import annotations

from mlflow.tracking import MlflowClient

from tvrl_bench.sweeps.plan import TrialSpec
from tvrl_bench.tracking.mlflow_run import EXPERIMENT_KIND, EXPERIMENT_KIND_TAG, experiment_id
from tvrl_bench.tracking.params import axis_run_name


def test_study_experiments_are_tagged_as_model_training_when_created_or_reopened(tmp_path):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    client = MlflowClient(uri)
    created = experiment_id(client, "samplers", uri)
    assert client.get_experiment(created).tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND == "custom_model_development"
    older = client.create_experiment("older")  # made before the tag existed
    assert experiment_id(client, "older", uri) == older
    assert client.get_experiment(older).tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND


def test_trial_runs_are_named_by_axis_values_in_axis_order_and_seed():
    assert axis_run_name({"sampler": "sage", "credit": "window3"}, 0) == "sage-window3-s0"
    assert axis_run_name({"sampler": "dance", "credit": "uniform"}, 2) == "dance-uniform-s2"
    assert axis_run_name({"reward": "/tmp/x/components/rewards/faulty_oracle.gin"}, 1) == "faulty_oracle-s1"
    assert axis_run_name({"sampler": "sage", "credit": "uniform"}, 0, base=True) == "base-s0"
    spec = TrialSpec(("p.gin",), (), {"reward": "/tmp/broken_critic.gin", "credit": "uniform"}, seed=1)
    assert spec.title == "reward=broken_critic credit=uniform seed=1"
