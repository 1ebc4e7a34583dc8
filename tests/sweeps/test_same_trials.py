"""A study's trials keep one configuration (sweeps/same_trials.py): a sweep of the same study with another
`--steps`, or over a store holding another profile's runs, is refused before any trial runs, naming the setting
and the fix; the untrained base rows are shared by every step count. Scripted trials on a real SQLite store."""

from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from tests.sweeps.helpers import options, write_study
from tests.sweeps.test_stages import Logging, flag
from tests.tracking.helpers import fresh_store
from tvrl_bench.config import ConfigError
from tvrl_bench.sweeps.driver import run_sweep

pytestmark = pytest.mark.integration


class LoggingSteps(Logging):
    """Logging's trials, with the params a real trial logs that name its configuration: steps, profile, method."""

    def __init__(self, profile: str = "toy_v1"):
        super().__init__()
        self.profile = profile

    def submit(self, command):
        future = super().submit(command)
        steps = [b.rsplit(" ", 1)[1] for b in command.args if b.startswith("training.trial.steps = ")][-1]
        client = MlflowClient(flag(command, "--tracking-uri"))
        experiment = client.get_experiment_by_name(flag(command, "--experiment")).experiment_id
        run = client.search_runs([experiment], order_by=["attributes.start_time DESC"], max_results=1)[0]
        client.log_param(run.info.run_id, "training.trial.steps", steps)
        client.log_param(run.info.run_id, "profile", self.profile)
        client.log_param(run.info.run_id, "method", "base" if steps == "0" else "GRPO")
        return future


@pytest.fixture
def uri(tmp_path_factory, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return fresh_store(tmp_path_factory, tmp_path)


def test_a_rerun_with_other_steps_is_refused_naming_the_steps_and_the_flag(uri, tmp_path):
    study = str(write_study(tmp_path, "/nowhere", seeds="[0, 1]"))
    run_sweep(study, LoggingSteps, options(uri, tmp_path))
    executor = LoggingSteps()
    with pytest.raises(ConfigError) as err:
        run_sweep(study, lambda: executor, options(uri, tmp_path, steps=1))
    (line,) = str(err.value).splitlines()
    assert line.startswith(f"{study}: study tiny already holds 4 finished runs of the arms and seeds this sweep plans "
                           "under other trial keys (credit=uniform seed=0: training.trial.steps = 2 (now 1)); a table "
                           "would average the two as one seed: sweep it with --steps 2, as its runs were, or run it "
                           "under another sweeps.study.name or into another store (--tracking-uri)"), line
    assert executor.commands == []
    again = LoggingSteps()
    run_sweep(study, lambda: again, options(uri, tmp_path, steps=2))  # the same step count resumes: nothing to run
    assert again.commands == []


def test_base_rows_are_shared_by_every_step_count(uri, tmp_path):
    """Base rows train 0 steps whatever --steps says: their runs never clash, so only the trained rows count."""
    study = write_study(tmp_path, "/nowhere", seeds="[0]")
    study.write_text(study.read_text() + "sweeps.study.base = True\n")
    run_sweep(str(study), LoggingSteps, options(uri, tmp_path))
    with pytest.raises(ConfigError, match="already holds 2 finished runs of the arms"):
        run_sweep(str(study), LoggingSteps, options(uri, tmp_path, steps=1))


def test_a_sweep_over_runs_of_another_profile_is_refused(uri, tmp_path):
    """Runs of another profile put into the study (a record, a hand-logged run) are noticed by the sweep."""
    study = str(write_study(tmp_path, "/nowhere", seeds="[0]"))
    run_sweep(study, lambda: LoggingSteps(profile="toy_v3"), options(uri, tmp_path))
    with pytest.raises(ConfigError) as err:
        run_sweep(study, LoggingSteps, options(uri, tmp_path, steps=3))
    (line,) = str(err.value).splitlines()
    assert "already holds finished runs of another profile (2 runs of toy_v3), and this sweep runs " \
           "components/profiles/toy_v1.gin (toy_v1)" in line
