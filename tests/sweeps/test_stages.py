"""A staged study (sweeps.study.decide) through the real driver and a real SQLite MLflow store: trials are scripted
(each logs a finished run with a chosen wide_eval/overall), so stages, decisions, resume and refusals are checked
in seconds."""

from __future__ import annotations

from concurrent.futures import Future

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tests.sweeps.helpers import options, write_study
from tests.tracking.helpers import fresh_store
from tvrl_bench.config import ConfigError
from tvrl_bench.executors.base import Executor, TrialCommand
from tvrl_bench.sweeps.driver import run_sweep
from tvrl_bench.tracking.mlflow_run import TrialTracker

pytestmark = pytest.mark.integration

EFFECT = {"uniform": 0.0, "window3": 0.30, "window7": 0.0}  # window3 is far better; window7 is uniform's equal
DECIDE = "{'baseline': {'credit': 'uniform'}, 'seeds_per_stage': 5, 'max_stages': 2}"


def flag(command: TrialCommand, name: str) -> str:
    args = list(command.args)
    return args[args.index(name) + 1]


class Logging(Executor):
    """Each trial logs a FINISHED run as tvrl-train would, its wide_eval/overall set by its credit and seed."""

    def __init__(self):
        self.commands: list[TrialCommand] = []

    def submit(self, command: TrialCommand) -> Future:
        self.commands.append(command)
        credit = flag(command, "--label").split("=", 1)[1]
        seed = int(next(b for b in command.args if b.startswith("training.trial.seed = ")).rsplit(" ", 1)[1])
        key = command.log_path.rsplit("/", 1)[1].split(".attempt")[0]
        tags = {"tvrl.trial_key": key, "tvrl.attempt": flag(command, "--attempt"), "tvrl.role": "trial",
                "tvrl.study": flag(command, "--study"), "mlflow.parentRunId": flag(command, "--parent-run-id")}
        tracker = TrialTracker(flag(command, "--tracking-uri"), flag(command, "--experiment"), f"{credit}-s{seed}", tags)
        tracker.log_params({"credit": credit, "seed": seed})
        noise = np.random.default_rng(seed * 31 + len(credit)).normal(0, 0.02)
        tracker.log_metrics({"wide_eval/overall": 0.6 + EFFECT[credit] + noise}, step=1)
        tracker.finish()
        future: Future = Future()
        future.set_result(0)
        return future


def staged_study(tmp_path, decide: str = DECIDE, profile: str | None = None):
    path = write_study(tmp_path, "/nowhere", name="staged", axes="{'credit': ['uniform', 'window3', 'window7']}",
                       seeds=str(list(range(10))))
    text = path.read_text() + f"sweeps.study.decide = {decide}\n"
    if profile:
        text = text.replace("components/profiles/toy_v1.gin", profile)
    path.write_text(text)
    return str(path)


def credits_and_seeds(commands) -> list[tuple[str, int]]:
    return sorted((flag(c, "--label").split("=", 1)[1],
                   int(next(b for b in c.args if b.startswith("training.trial.seed = ")).rsplit(" ", 1)[1]))
                  for c in commands)


@pytest.fixture
def uri(tmp_path_factory, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return fresh_store(tmp_path_factory, tmp_path)


def test_stage_two_runs_only_the_open_arm_and_its_baseline_and_the_decisions_are_recorded(uri, tmp_path):
    study = staged_study(tmp_path)
    executor = Logging()
    summary = run_sweep(study, lambda: executor, options(uri, tmp_path))
    first, second = executor.commands[:15], executor.commands[15:]
    assert credits_and_seeds(first) == [(c, s) for c in ("uniform", "window3", "window7") for s in range(5)]
    assert credits_and_seeds(second) == [(c, s) for c in ("uniform", "window7") for s in range(5, 10)]
    staged, results = summary.decisions
    verdicts = {v.comparison.arm: (v.verdict, v.stage) for v in results[-1].verdicts}
    assert verdicts == {"credit=window3": ("larger", 1), "credit=window7": ("undecided", 2)}
    lines = summary.decision_lines()
    assert lines[1].startswith("  credit=window3 vs credit=uniform: larger at stage 1 (+30.")
    assert lines[-1] == "trials: 25 of at most 30 (a grid of 2 stages): 5 saved"

    client = MlflowClient(uri)
    parent = next(r for r in client.search_runs([client.get_experiment_by_name("staged").experiment_id])
                  if r.data.tags.get("tvrl.role") == "study")
    assert '"alpha": 0.05' in parent.data.tags["tvrl.decide"]
    assert parent.data.tags["tvrl.profile"] == "components/profiles/toy_v1.gin"
    csv = client.download_artifacts(parent.info.run_id, "decisions.csv", str(tmp_path))
    rows = open(csv).read().splitlines()
    assert rows[0] == "arm,baseline,verdict,stage,difference,boundary,n_arm,n_baseline"
    assert rows[1].startswith("credit=window3,credit=uniform,larger,1,30.") and rows[1].endswith(",5,5")
    assert rows[2].startswith("credit=window7,credit=uniform,undecided,2,") and rows[2].endswith(",10,10")

    again = Logging()
    rerun = run_sweep(study, lambda: again, options(uri, tmp_path))
    assert again.commands == []
    assert rerun.decision_lines() == lines


def test_a_study_edited_between_stages_is_refused_before_anything_runs(uri, tmp_path):
    study = staged_study(tmp_path)
    run_sweep(study, Logging, options(uri, tmp_path))
    edited = staged_study(tmp_path, DECIDE.replace("'max_stages': 2", "'max_stages': 2, 'margin': 2.0"))
    executor = Logging()
    with pytest.raises(ConfigError) as err:
        run_sweep(edited, lambda: executor, options(uri, tmp_path))
    (line,) = str(err.value).splitlines()
    assert "sweeps.study.decide['margin'] changed since the study's first stage (0.0 -> 2.0)" in line
    assert line.endswith("restore it, or run the changed study under a new sweeps.study.name or into another "
                         "store (--tracking-uri)")
    assert executor.commands == []


def test_a_study_rerun_on_another_profile_is_refused(uri, tmp_path):
    run_sweep(staged_study(tmp_path), Logging, options(uri, tmp_path))
    other = staged_study(tmp_path, profile="components/profiles/toy_v2.gin")
    with pytest.raises(ConfigError, match="already holds runs of the profile components/profiles/toy_v1.gin, and this "
                                          "sweep runs components/profiles/toy_v2.gin"):
        run_sweep(other, Logging, options(uri, tmp_path))


def test_the_dry_run_shows_the_next_stage_and_the_most_the_study_can_run(uri, tmp_path, capsys):
    study = staged_study(tmp_path)
    run_sweep(study, Logging, options(uri, tmp_path, dry_run=True))
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("study staged (staged: stage 1 of at most 2 runs 15 trials; at most 30 "
                                           "trials over 2 stages of 5 seeds;")
    assert text.count("pending") == 15
    assert text.splitlines()[-1] == ("expected: 15 trials to run in this stage (15 trained) x 5.0 min each, 2 at a "
                                     "time: about 38 min (reference figures, docs/performance.md)")  # 15 x 5.0 / 2


def test_a_decision_metric_no_trial_logged_stops_the_study_with_one_line_and_a_fix_resumes_it(uri, tmp_path):
    """The evaluator declares eval/motion, but these trials never log it: stage 1 runs, then one line (not a study
    that stops with no decisions); with the metric fixed the rerun decides from the same trials."""
    study = staged_study(tmp_path, DECIDE[:-1] + ", 'metric': 'eval/motion'}")
    with pytest.raises(ConfigError) as err:
        run_sweep(study, Logging, options(uri, tmp_path))
    (line,) = str(err.value).splitlines()
    assert line.startswith(f"{study}:") and "sweeps.study.decide['metric'] = 'eval/motion': none of the study's 15 " \
        "finished trials logged it, so nothing can be decided; they logged wide_eval/overall: set the metric" in line
    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("staged").experiment_id])
    assert {r.info.status for r in runs} == {"FINISHED", "FAILED"}  # the parent FAILED, nothing left RUNNING
    executor = Logging()
    fixed = run_sweep(staged_study(tmp_path), lambda: executor, options(uri, tmp_path))
    assert len(executor.commands) == 10 and fixed.decisions[1][-1].verdicts  # stage 2 only: stage 1 is kept


def test_a_stage_runs_one_base_row_per_value_of_each_base_axis(tmp_path, monkeypatch):
    """`sweeps.study.base = ['credit']` (one base row per critic, in the rewards study) keeps every base row of a
    seed in each stage, not only the last one planned."""
    from tvrl_bench.sweeps.plan import expand, load_study
    from tvrl_bench.sweeps.stages import stage_plan

    monkeypatch.chdir(tmp_path)
    path = staged_study(tmp_path)
    with open(path, "a") as handle:
        handle.write("sweeps.study.base = ['credit']\n")
    study, _ = load_study(path)
    plan = stage_plan(study, expand(study, path), path)
    stage_one = plan.stage_trials(1)
    base = sorted((spec.labels["credit"], spec.seed) for spec in stage_one if spec.base)
    assert base == sorted((credit, seed) for credit in ("uniform", "window3", "window7") for seed in range(5))
    assert len(stage_one) == 15 + 15
    later = plan.stage_trials(2, open_arms={"credit=window7"})
    assert sorted(s.labels["credit"] for s in later if s.base) == sorted(["uniform", "window3", "window7"] * 5)
    assert plan.most_trials() == 30 + 30
