"""`tvrl-bench wide-eval`: a finished tiny study's final policies scored again on more held-out prompts."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from mlflow.tracking import MlflowClient
from scipy import stats

from tests.sweeps.helpers import InProcess, options, write_study
from tests.tracking.helpers import fresh_store
from tvrl_bench.cli.main import main
from tvrl_bench.sweeps.driver import run_sweep
from tvrl_bench.sweeps.plan import TrialSpec, expand, load_study
from tvrl_bench.sweeps.wide_eval import TrialScores, paired_rows, score_trial


@pytest.fixture
def finished_study(tmp_path_factory, tmp_path, monkeypatch, tiny_policy_path):
    """A tiny study (base and uniform credit, seeds 0 and 1, one step) run to the end: (study file, uri)."""
    monkeypatch.chdir(tmp_path)
    uri = fresh_store(tmp_path_factory, tmp_path)
    study = write_study(tmp_path, tiny_policy_path, axes="{'objective': ['grpo'], 'credit': ['uniform']}",
                        seeds="[0, 1]", steps=1)
    study.write_text(study.read_text() + "sweeps.study.base = True\nsweeps.study.tables = ['power']\n")
    summary = run_sweep(str(study), InProcess, options(uri, tmp_path))
    assert len(summary.finished) == 4 and not summary.failed
    return study, uri


def logged_eval(uri: str) -> dict[str, dict[str, float]]:
    """Each trial run's final eval/* metrics by trial key."""
    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("tiny").experiment_id], max_results=100)
    return {r.data.tags["tvrl.trial_key"]: {k.removeprefix("eval/"): v for k, v in r.data.metrics.items()
                                           if k.startswith("eval/")}
            for r in runs if r.data.tags.get("tvrl.role") == "trial"}


@pytest.mark.integration
def test_wide_eval_reproduces_each_trials_own_evaluation_then_logs_the_wider_scores_and_table(
        finished_study, tmp_path, tmp_path_factory, capsys):
    study, uri = finished_study
    out = tmp_path / "out"
    (tmp_path / "other").mkdir()
    elsewhere = fresh_store(tmp_path_factory, tmp_path / "other")
    assert main(["wide-eval", str(study), "--out", str(out), "--tracking-uri", elsewhere, "--no-progress"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()  # refused before any scoring
    assert f"--tracking-uri {elsewhere}: this store has no study 'tiny'" in line and "--no-log" in line

    # The scores are logged before any file is written: a study page that cannot be written loses none of them.
    table = tmp_path / "wide.csv"
    blocked = out / "reports" / "tiny" / "index.html"
    blocked.mkdir(parents=True)
    assert main(["wide-eval", str(study), "--out", str(out), "--prompts", "24", "--workers", "1",
                 "--csv", str(table), "--tracking-uri", uri, "--no-progress"]) == 2
    printed, err = capsys.readouterr()
    assert "tiny: the trials' own eval prompts" in printed and "wider held-out prompts" in printed
    assert "tvrl-bench wide-eval: 4 of 4 trials scored (" in err  # --no-progress: a line per trial, not silence
    assert "logged wide_eval/* to 4 trial runs of 'tiny'" in printed
    assert err.strip().splitlines()[-1] == (
        f"tvrl-bench wide-eval: error: study page not written: {blocked}: a folder stands where this file goes; move "
        "it away; the scores are logged and the tables written; once that is fixed, write it with: tvrl-report "
        f"--study tiny --tracking-uri {uri} --out {out / 'reports'}")
    blocked.rmdir()
    rows = list(csv.DictReader(table.open()))
    assert sorted((r["arm"], r["seed"]) for r in rows) == [("base", "0"), ("base", "1"),
                                                            ("grpo / uniform", "0"), ("grpo / uniform", "1")]
    logged = logged_eval(uri)
    for row in rows:
        own = logged[row["key"]]
        for metric in ("overall", "object", "attribute", "motion", "background", "critic_reward"):
            assert float(row[f"own_{metric}"]) == pytest.approx(own[metric], abs=1e-9), (row["arm"], metric)
        assert int(row["prompts"]) + int(row["dropped"]) == 24 and int(row["prompts"]) > 4
    trained = {r["seed"]: logged[r["key"]]["critic_reward"] for r in rows if r["arm"] == "grpo / uniform"}
    untrained = {r["seed"]: logged[r["key"]]["critic_reward"] for r in rows if r["arm"] == "base"}
    assert all(abs(trained[s] - untrained[s]) > 1e-6 for s in trained)  # so matching them needs the checkpoint

    # The wider scores, in each trial's run at its final step, and the power table read from them.
    client = MlflowClient(uri)
    runs = {r.data.tags["tvrl.trial_key"]: r
            for r in client.search_runs([client.get_experiment_by_name("tiny").experiment_id], max_results=100)
            if r.data.tags.get("tvrl.role") == "trial"}
    for row in rows:
        run = runs[row["key"]]
        assert run.data.tags["tvrl.wide_eval_prompts"] == row["prompts"]
        for metric in ("overall", "object", "attribute", "motion", "background", "critic_reward"):
            assert run.data.metrics[f"wide_eval/{metric}"] == pytest.approx(float(row[f"wide_{metric}"]), abs=1e-12)
        wide = client.get_metric_history(run.info.run_id, "wide_eval/overall")[-1]
        assert wide.step == (0 if row["arm"] == "base" else 1)
    wide_table = {r["Objective, credit"]: r for r in csv.DictReader((out / "reports" / "tiny" / "power.csv").open())}
    for metric, column in (("overall", "Overall"), ("critic_reward", "Critic reward")):
        by_seed = {(r["arm"], r["seed"]): 100 * float(r[f"wide_{metric}"]) for r in rows}
        base = [by_seed["base", s] for s in ("0", "1")]
        trained = [by_seed["grpo / uniform", s] for s in ("0", "1")]
        assert float(wide_table["Base model"][column]) == pytest.approx(np.mean(base))
        assert float(wide_table["GRPO (clipped ratio), uniform credit"][column]) == pytest.approx(np.mean(trained))
    overall = {(r["arm"], r["seed"]): 100 * float(r["wide_overall"]) for r in rows}
    assert float(wide_table["GRPO (clipped ratio), uniform credit"]["Δ vs base"]) == pytest.approx(
        np.mean([overall["grpo / uniform", s] - overall["base", s] for s in ("0", "1")]))

    # The same wide-eval again finds the same scores in every run and logs nothing twice.
    assert main(["wide-eval", str(study), "--out", str(out), "--prompts", "24", "--workers", "1",
                 "--tracking-uri", uri, "--no-progress"]) == 0
    assert "logged wide_eval/* to 0 trial runs of 'tiny' in" in capsys.readouterr().out
    for row in rows:
        assert len(client.get_metric_history(runs[row["key"]].info.run_id, "wide_eval/overall")) == 1


@pytest.mark.integration
def test_the_wider_set_starts_with_the_trials_eval_prompts_and_leaves_out_every_trained_scene(finished_study, tmp_path):
    from tvrl_bench import config as gin_config
    from tvrl_bench.datasets.toy import signatures
    from tvrl_bench.sweeps.wide_eval import wider_eval_items
    from tvrl_bench.training.trial.build import build_settings

    study, _ = finished_study
    loaded_study, resolved = load_study(str(study))
    spec = next(s for s in expand(loaded_study, resolved) if not s.base)
    settings = build_settings(gin_config.load_config(list(spec.files), list(spec.bindings)))
    train, own = signatures(settings.dataset.train), [it.prompt for it in settings.dataset.eval]
    items, dropped = wider_eval_items(settings, 24)
    assert [it.prompt for it in items[: len(own)]] == own
    assert signatures(items).isdisjoint(train) and len(items) + dropped == 24
    assert len(signatures(items)) == len(items)  # distinct scenes
    with pytest.raises(ValueError, match="fewer than the trial's own 4 eval prompts"):
        score_trial(spec, tmp_path / "out" / "runs" / "tiny", 3)


def test_an_unfinished_trial_is_named_with_how_to_finish_it(tmp_path, tiny_policy_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    study = write_study(tmp_path, tiny_policy_path, axes="{'credit': ['uniform']}", steps=1)
    loaded_study, resolved = load_study(str(study))
    (spec,) = expand(loaded_study, resolved)
    expected = f"{spec.key}: trial credit=uniform seed=0 has no finished checkpoint; finish the study first"
    with pytest.raises(FileNotFoundError, match=expected):
        score_trial(spec, tmp_path / "out" / "runs" / "tiny", 16)
    assert main(["wide-eval", str(study), "--out", str(tmp_path / "out"), "--no-progress"]) != 0
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert expected in line


def test_paired_rows_match_an_independent_paired_t_interval():
    base = {0: 0.50, 1: 0.55, 2: 0.52}
    arm = {0: 0.56, 1: 0.57, 2: 0.60}

    def scores(values, is_base):
        return [TrialScores(TrialSpec(("p.gin",), (), {"credit": "uniform"}, seed, is_base, f"{is_base}{seed}"),
                            own={"overall": v}, wide={"overall": v}, prompts=10, dropped=0)
                for seed, v in values.items()]

    rows = paired_rows(scores(arm, False) + scores(base, True))
    assert [r.arm for r in rows] == ["base", "uniform"] and math.isnan(rows[0].delta)
    diffs = 100 * (np.array(list(arm.values())) - np.array(list(base.values())))
    half = stats.t.ppf(0.975, 2) * diffs.std(ddof=1) / np.sqrt(3)
    assert rows[1].delta == pytest.approx(diffs.mean())
    assert (rows[1].low, rows[1].high) == pytest.approx((diffs.mean() - half, diffs.mean() + half))
    assert rows[1].mean == pytest.approx(100 * np.mean(list(arm.values()))) and rows[1].seeds == 3
    assert rows[1].per_seed == pytest.approx(dict(enumerate(diffs)))
