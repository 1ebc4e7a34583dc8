"""A record keeps the eval/* curves (`history`): saved from one SQLite store and loaded into a fresh one, each
run's `get_metric_history` of every eval/* metric is the original's, its latest value the recorded final value, and
the study page draws its gain curve; a line without `history` (an older record) loads its final values; a
malformed history is refused in one line, with nothing written."""

from __future__ import annotations

import json

import pytest
from mlflow.tracking import MlflowClient

from tests.sweeps.test_records import load, store_runs, write_record
from tests.tracking.helpers import fresh_store
from tvrl_bench.cli.main import main
from tvrl_bench.report.runs.histories import HistoryCache
from tvrl_bench.report.study_page.gain_curves import run_gains
from tvrl_bench.sweeps.state import StudyTracker

pytestmark = pytest.mark.integration

CURVE_STEPS = (0, 20, 40, 60)


def logged_study(uri: str) -> dict[str, str]:
    """Study `hist` in the store: two trained trials (eval/* at steps 0, 20, 40, 60, with step 20 logged twice in
    one of them, the later value winning; train/loss every step) and a base trial (eval/* at step 0 only).
    Returns {trial key: run id}."""
    tracker = StudyTracker.open(uri, "hist", [], [], "")
    client = tracker.client
    ids = {}
    for i, (credit, method, steps) in enumerate((("uniform", "GRPO", 60), ("window3", "GRPO", 60),
                                                 ("uniform", "base", 0))):
        key = f"k{method}-{credit}"
        tags = {"tvrl.trial_key": key, "tvrl.role": "trial", "tvrl.study": "hist", "tvrl.attempt": "1",
                "mlflow.parentRunId": tracker.parent_run_id}
        run_id = client.create_run(tracker.experiment_id, run_name=f"{method}-{credit}-s0", tags=tags).info.run_id
        for name, value in {"credit": credit, "seed": "0", "method": method, "profile": "toy",
                            "training.trial.steps": str(steps)}.items():
            client.log_param(run_id, name, value)
        for step in (s for s in CURVE_STEPS if s <= steps):
            client.log_metric(run_id, "eval/overall", 0.5 + 0.004 * step * (i + 1), step=step, timestamp=1000 + step)
            client.log_metric(run_id, "eval/critic_reward", 0.6 + 0.005 * step, step=step, timestamp=1000 + step)
        if i == 1:
            client.log_metric(run_id, "eval/overall", 0.1, step=20, timestamp=1021)  # logged again: the latest wins
        for step in range(1, steps + 1):
            client.log_metric(run_id, "train/loss", 1.0 / step, step=step, timestamp=2000 + step)
        client.set_terminated(run_id, "FINISHED")
        ids[key] = run_id
    tracker.finish({})
    return ids


def history(client: MlflowClient, run_id: str, name: str) -> list[tuple[int, float]]:
    """(step, value) of each point, in the order a reader takes them (step, then timestamp)."""
    return [(m.step, m.value) for m in sorted(client.get_metric_history(run_id, name),
                                              key=lambda m: (m.step, m.timestamp))]


def test_a_record_keeps_the_eval_curves_and_a_load_gives_the_same_metric_history(tmp_path_factory, tmp_path,
                                                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    uri_a, uri_b = fresh_store(tmp_path_factory, tmp_path / "a"), fresh_store(tmp_path_factory, tmp_path / "b")
    original = logged_study(uri_a)
    record = tmp_path / "hist.jsonl"
    assert main(["record", "save", "hist", "--out", str(record), "--tracking-uri", uri_a]) == 0
    lines = {line["key"]: line for line in map(json.loads, record.read_text().splitlines()[1:])}
    assert sorted(lines["kGRPO-uniform"]["history"]) == ["eval/critic_reward", "eval/overall"]  # no train/* curve
    assert "history" not in lines["kbase-uniform"]  # one point: the final value is the whole curve

    assert main(["record", "load", str(record), "--tracking-uri", uri_b]) == 0
    a, b = MlflowClient(uri_a), MlflowClient(uri_b)
    loaded = {r.data.tags["tvrl.trial_key"]: r for r in b.search_runs([b.get_experiment_by_name("hist").experiment_id])
              if "tvrl.trial_key" in r.data.tags}
    assert sorted(loaded) == sorted(original)
    for key, run_id in original.items():
        run = loaded[key]
        for name in ("eval/overall", "eval/critic_reward"):
            assert history(b, run.info.run_id, name) == history(a, run_id, name)  # each point once
        assert history(b, run.info.run_id, "train/loss") == history(a, run_id, "train/loss")[-1:]  # final only
        assert run.data.metrics == a.get_run(run_id).data.metrics  # the latest values are the recorded finals
    assert history(b, loaded["kGRPO-window3"].info.run_id, "eval/overall")[1:3] == [(20, pytest.approx(0.66)),
                                                                                    (20, 0.1)]
    cache = HistoryCache(b)  # what the study page's gain curves read
    gains = run_gains(cache.get(loaded["kGRPO-uniform"].info.run_id, "eval/overall"))
    assert gains is not None and gains.index.tolist() == list(CURVE_STEPS)


def test_a_line_without_history_loads_its_final_values(tmp_path_factory, tmp_path, capsys):
    uri = fresh_store(tmp_path_factory, tmp_path)
    record = write_record(tmp_path / "old.jsonl")  # format 1 as saved before records kept curves
    assert "history" not in record.read_text()
    assert load(record, uri, capsys)[0] == 0
    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("rec").experiment_id], "tags.`tvrl.trial_key` != ''")
    assert sorted(history(client, r.info.run_id, "wide_eval/overall") for r in runs) == [[(2, 0.5)], [(2, 0.6)]]


def with_history(trial: dict, value) -> None:
    trial["metrics"]["eval/overall"] = [0.7, 2]
    trial["history"] = value


@pytest.mark.parametrize("value, needle", [
    ([[0, 0.5], [2, 0.7]], None),  # well formed: loads
    ("0:0.5,2:0.7", ":3: history must map metric names to [[step, value], ...], not str"),
    ({"eval/overall": [[0, 0.5], [2]]}, ":3: history['eval/overall'] = [[0, 0.5], [2]] must be a list of [step, "
                                        "value] pairs (a step 0 or more and a number) in step order"),
    ({"eval/overall": [[0, "0.5"], [2, 0.7]]}, ":3: history['eval/overall'] = [[0, '0.5'], [2, 0.7]] must be"),
    ({"eval/overall": [[2, 0.7], [0, 0.5]]}, ":3: history['eval/overall'] = [[2, 0.7], [0, 0.5]] must be"),
    ({"eval/overall": []}, ":3: history['eval/overall'] = [] must be a list of [step, value] pairs"),
    ({"eval/overall": [[0, 0.5], [2, 0.6]]}, ":3: history['eval/overall'] ends at [2, 0.6] but "
                                             "metrics['eval/overall'] = [0.7, 2]: a curve's last point is the metric's "
                                             "final [value, step]"),
    ({"eval/slot": [[0, 0.5], [2, 0.7]]}, ":3: history['eval/slot'] ends at [2, 0.7] but metrics['eval/slot'] = "
                                          "None"),
])
def test_a_malformed_history_is_refused_in_one_line(tmp_path_factory, tmp_path, capsys, value, needle):
    uri = fresh_store(tmp_path_factory, tmp_path)
    trials = [json.loads(line) for line in write_record(tmp_path / "good.jsonl").read_text().splitlines()[1:]]
    with_history(trials[1], {"eval/overall": value} if isinstance(value, list) else value)
    bad = write_record(tmp_path / "bad.jsonl", trials=trials)
    code, err = load(bad, uri, capsys)
    if needle is None:
        assert code == 0 and not err
        return
    assert code == 2 and len(err.splitlines()) == 1 and f"{bad}{needle}" in err, err
    assert "write the file with `tvrl-bench record save STUDY`" in err
    assert store_runs(uri) == {}  # nothing written
