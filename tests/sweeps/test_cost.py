"""The dry run's expected cost (tvrl_bench/sweeps/cost.py) through the real driver and a real SQLite MLflow store:
finished trial runs of known durations give the printed figures by hand; an empty store gives the reference line."""

from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from tests.sweeps.helpers import options, write_study
from tests.tracking.helpers import fresh_store
from tvrl_bench.sweeps.cost import REFERENCE_MINUTES, Estimate, wall_minutes
from tvrl_bench.sweeps.driver import plan, run_sweep
from tvrl_bench.sweeps.records import IMPORTED_TAG
from tvrl_bench.sweeps.state import StudyTracker

T0 = 1_700_000_000_000  # ms since the epoch: the runs' start


@pytest.fixture
def study(tmp_path, monkeypatch):
    """3 base rows (seeds 0-2) and 6 trained trials (uniform, window3 x seeds 0-2)."""
    monkeypatch.chdir(tmp_path)
    path = write_study(tmp_path, "/nowhere", seeds="[0, 1, 2]")
    path.write_text(path.read_text() + "sweeps.study.base = True\n")
    return str(path)


def dry_run(study: str, uri: str, tmp_path, capsys, workers: int = 2) -> str:
    run_sweep(study, None, options(uri, tmp_path, dry_run=True, workers=workers))
    return capsys.readouterr().out.splitlines()[-1]


def log_run(client, tracker, spec, status: str, seconds: float, params: dict[str, str], imported: bool = False) -> None:
    tags = {"tvrl.trial_key": spec.key, "tvrl.attempt": "1", "tvrl.role": "trial", "tvrl.study": tracker.study,
            "mlflow.parentRunId": tracker.parent_run_id, **({IMPORTED_TAG: "record.jsonl"} if imported else {})}
    run = client.create_run(tracker.experiment_id, start_time=T0, tags=tags, run_name=spec.title)
    for name, value in {"seed": str(spec.seed), "credit": spec.labels["credit"], **params}.items():
        client.log_param(run.info.run_id, name, value)
    if status != "RUNNING":
        client.set_terminated(run.info.run_id, status, end_time=T0 + int(seconds * 1000))


def test_finished_runs_of_the_study_give_the_measured_figures(study, tmp_path, tmp_path_factory, capsys):
    uri = fresh_store(tmp_path_factory, tmp_path)
    _, trials = plan(study, options(uri, tmp_path))
    base = [s for s in trials if s.base]
    trained = {(s.labels["credit"], s.seed): s for s in trials if not s.base}
    tracker = StudyTracker.open(uri, "tiny", ["samplers"], ["credit"])
    client = MlflowClient(uri)
    log_run(client, tracker, base[0], "FINISHED", 60, {"method": "base", "training.trial.steps": "0"})
    log_run(client, tracker, base[1], "FINISHED", 120, {"training.trial.steps": "0"})  # no method: steps 0 says base
    for (credit, seed), seconds in {("uniform", 0): 240, ("window3", 0): 300, ("uniform", 1): 420}.items():
        method = "GRPO" if credit == "uniform" else "TVRL"
        params = {"method": method, "training.trial.steps": "2"}
        log_run(client, tracker, trained[credit, seed], "FINISHED", seconds, params)
    log_run(client, tracker, trained["window3", 1], "FAILED", 3000, {"method": "TVRL"})  # not finished: not timed
    log_run(client, tracker, trained["uniform", 2], "RUNNING", 0, {"method": "GRPO"})
    # a run `record load` logged took the load's time, not a trial's: not timed
    log_run(client, tracker, trained["window3", 2], "FINISHED", 0.1, {"method": "TVRL"}, imported=True)
    tracker.finish({}, "KILLED")

    # to run: base seed 2 and 3 trained; base median of 1 and 2 min = 1.5, trained median of 4, 5, 7 min = 5.0;
    # 2 workers: (1.5 + 2 x 5.0) / 2 = 5.75 min -> about 6 min (the imported run is done but not timed)
    assert dry_run(study, uri, tmp_path, capsys) == (
        "expected: 3 trials to run (1 base row, 2 trained) x measured 1.5 / 5.0 min each, 2 at a time: about 6 min "
        "(from 5 finished trials of this study in the store)")
    # 4 workers: 11.5 / 4 = 2.9 min, but no less than the longest trial, 5.0 min
    assert dry_run(study, uri, tmp_path, capsys, workers=4).endswith("4 at a time: about 5 min (from 5 finished "
                                                                      "trials of this study in the store)")


def test_an_empty_store_gives_the_reference_figures(study, tmp_path, capsys):
    database = tmp_path / "none.db"
    line = dry_run(study, f"sqlite:///{database}", tmp_path, capsys)
    # (3 x 0.5 + 6 x 5.0) / 2 = 15.75 min -> about 16 min
    assert REFERENCE_MINUTES == {"base": 0.5, "trained": 5.0}
    assert line == ("expected: 9 trials to run (3 base rows, 6 trained) x 0.5 / 5.0 min each, 2 at a time: about 16 "
                    "min (reference figures, docs/performance.md)")
    assert not database.exists()


def test_a_kind_not_yet_measured_takes_its_reference_figure_and_says_so():
    estimate = Estimate({"base": 2, "trained": 4}, {"base": 0.9, "trained": 5.0}, {"base": 3, "trained": 0}, 3)
    assert estimate.line("this stage") == (
        "expected: 6 trials to run in this stage (2 base rows, 4 trained) x measured 0.9 / reference 5.0 min each, 3 "
        "at a time: about 7 min (from 3 finished trials of this study in the store; reference figures, "
        "docs/performance.md)")  # (1.8 + 20) / 3 = 7.27
    long = Estimate({"base": 0, "trained": 270}, {"base": 1.3, "trained": 5.0}, {"base": 0, "trained": 0}, 2)
    assert long.line().startswith("expected: 270 trials to run (270 trained) x 5.0 min each, 2 at a time: about 11 h "
                                  "15 min (")
    done = Estimate({"base": 0, "trained": 0}, dict(REFERENCE_MINUTES), {"base": 0, "trained": 0}, 2)
    assert done.line("this stage") == "expected: nothing to run in this stage (every trial in this stage is done)"


def test_wall_time_is_the_sum_over_workers_and_at_least_the_longest_trial():
    assert wall_minutes([1.0, 2.0, 3.0], 2) == 3.0
    assert wall_minutes([1.0, 7.0], 4) == 7.0
    assert wall_minutes([], 2) == 0.0
