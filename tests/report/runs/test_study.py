"""Reading a study's runs from MLflow: finished trials, excluded runs, the parent, runs logged by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from tvrl_bench.report.errors import ReportError
from tvrl_bench.report.runs.study import load_study_runs, resolve_tracking_uri, split_runs


def test_load_study_runs_splits_trials_parent_and_excluded(new_study, mlflow_store):
    uri, client, _ = mlflow_store
    study = new_study("runs", tables="rewards, credit")
    finished = study.trial({"method": "GRPO", "seed": "0"}, {"eval/overall": 0.5})
    by_hand = study.trial({"method": "TVRL", "seed": "0"}, {"eval/overall": 0.6}, by_hand=True)
    study.trial({"method": "TVRL", "seed": "1"}, {"eval/overall": 0.7}, status="FAILED")
    study.trial({"method": "TVRL", "seed": "2"}, {}, status="RUNNING")
    # another role logged into the experiment (say a judging run) is neither a trial nor excluded
    other = client.create_run(study.experiment_id, tags={"tvrl.role": "judging"})
    client.set_terminated(other.info.run_id)
    study.finish()
    runs = load_study_runs(study.study, uri)
    assert sorted(runs.trials["run_id"]) == sorted([finished, by_hand])
    assert runs.excluded_counts == {"FAILED": 1, "RUNNING": 1}
    assert runs.parent["run_id"] == study.parent_id
    assert runs.tables_tag() == ["rewards", "credit"]
    assert runs.trials.set_index("run_id").loc[by_hand, "metrics.eval/overall"] == pytest.approx(0.6)
    assert runs.trials["params.seed"].tolist() == ["0", "0"]
    assert runs.status_note() == "Excluded: 2 trial runs not FINISHED and left out (FAILED 1, RUNNING 1)."
    assert runs.has_param("method") and not runs.has_param("sampler")
    assert runs.metric_names() == ["eval/overall"]


def test_a_study_logged_entirely_by_hand_has_no_parent(new_study, mlflow_store):
    study = new_study("hand", parent=False)
    study.trial({"method": "GRPO", "seed": "0"}, {"eval/overall": 0.5}, by_hand=True)
    runs = load_study_runs(study.study, mlflow_store[0])
    assert runs.parent is None and len(runs.trials) == 1 and runs.tables_tag() is None


def frame(rows):
    base = {"run_name": "r", "start_time": 0, "end_time": 0}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_latest_finished_attempt_of_a_trial_wins():
    runs = split_runs(frame([
        {"run_id": "a0", "status": "FINISHED", "tags.tvrl.trial_key": "k", "tags.tvrl.attempt": "0", "end_time": 5,
         "params.seed": "0", "metrics.eval/overall": 0.1},
        {"run_id": "a2", "status": "FINISHED", "tags.tvrl.trial_key": "k", "tags.tvrl.attempt": "2", "end_time": 9,
         "params.seed": "0", "metrics.eval/overall": 0.5},
        {"run_id": "a1", "status": "FAILED", "tags.tvrl.trial_key": "k", "tags.tvrl.attempt": "1", "end_time": 7,
         "params.seed": "0"},
        {"run_id": "h", "status": "FINISHED", "params.seed": "1", "metrics.eval/overall": 0.3},
    ]), study="s")
    assert sorted(runs.trials["run_id"]) == ["a2", "h"]
    assert runs.superseded["run_id"].tolist() == ["a0"]
    assert runs.excluded_counts == {"FAILED": 1}
    assert "1 earlier finished attempt of retried trials superseded" in runs.status_note()


def test_parent_found_without_tags_as_the_run_others_point_to():
    runs = split_runs(frame([
        {"run_id": "p", "status": "FINISHED", "run_name": "s"},
        {"run_id": "t", "status": "FINISHED", "tags.mlflow.parentRunId": "p", "params.seed": "0"},
    ]), study="s")
    assert runs.parent["run_id"] == "p" and runs.trials["run_id"].tolist() == ["t"]


def test_runs_without_seed_count_as_their_own_seed_and_are_noted():
    runs = split_runs(frame([{"run_id": "x", "status": "FINISHED", "params.method": "GRPO"}]), study="s")
    assert runs.notes == ["no run has a 'seed' param: every run counts as its own seed"]


def test_missing_sqlite_database_is_a_clear_error_and_is_not_created(tmp_path):
    path = tmp_path / "nothing.db"
    with pytest.raises(ReportError, match="no MLflow database at .*nothing.db.*--tracking-uri"):
        resolve_tracking_uri(f"sqlite:///{path}")
    assert not path.exists()
    with pytest.raises(ReportError, match="no MLflow database"):
        load_study_runs("s", f"sqlite:///{path}")


def test_a_study_with_runs_of_two_profiles_is_refused_not_averaged(new_study, mlflow_store):
    study = new_study("two_profiles")
    study.trial({"method": "GRPO", "seed": "0", "profile": "toy"}, {"eval/overall": 0.75})
    study.trial({"method": "GRPO", "seed": "0", "profile": "toy_v3"}, {"eval/overall": 0.83})
    study.finish()
    with pytest.raises(ReportError) as err:
        load_study_runs(study.study, mlflow_store[0])
    (line,) = str(err.value).splitlines()
    assert f"study '{study.study}' holds finished runs of 2 profiles: toy (1 runs), toy_v3 (1 runs)" in line
    assert "sweep each profile or setting under its own sweeps.study.name" in line


def test_the_profile_param_names_the_first_profile_file_parsed():
    from tvrl_bench.tracking.params import profile_name

    assert profile_name(["/x/components/profiles/toy.gin", "/x/components/credit/uniform.gin"]) == "toy"
    assert profile_name(["/x/components/credit/uniform.gin", "/x/components/profiles/toy_v3.gin"]) == "toy_v3"
    assert profile_name(["/x/my_trial.gin"]) == "none"


def test_a_study_with_two_configurations_of_one_arm_and_seed_is_refused_naming_the_setting(new_study, mlflow_store):
    """A rerun with another --steps under the same study: 75 and 50 would be reported as one seed of 62.50."""
    study = new_study("two_step_counts")
    for steps, score in (("2", 0.75), ("1", 0.50)):
        study.trial({"method": "GRPO", "credit": "uniform", "seed": "0", "training.trial.steps": steps},
                    {"eval/overall": score}, trial_key=f"key{steps}")
    study.trial({"method": "GRPO", "credit": "window3", "seed": "0", "training.trial.steps": "2"}, {"eval/overall": 0.8})
    study.finish()
    with pytest.raises(ReportError) as err:
        load_study_runs(study.study, mlflow_store[0])
    (line,) = str(err.value).splitlines()
    assert (f"study '{study.study}' holds 2 finished trials of the same arm and seed (credit=uniform method=GRPO "
            "seed=0) under different trial keys (training.trial.steps: 1, 2; 1 arm-seeds in all); a table would "
            "average them as one seed") in line, line


def test_the_same_trial_retried_and_runs_logged_by_hand_are_not_two_configurations(new_study, mlflow_store):
    study = new_study("one_configuration")
    for attempt in (1, 2):
        study.trial({"method": "GRPO", "seed": "0"}, {"eval/overall": 0.5}, trial_key="k", attempt=attempt)
    for score in (0.6, 0.7):
        study.trial({"method": "GRPO", "seed": "0", "lr": str(score)}, {"eval/overall": score}, by_hand=True)
    study.finish()
    assert len(load_study_runs(study.study, mlflow_store[0]).trials) == 3
