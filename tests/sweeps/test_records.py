"""A study's record (`tvrl-bench record save/load`): a staged study saved from one store and loaded into a new one
resumes there without rerunning a trial and reaches the same decisions; a file that is not a record is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.sweeps.helpers import options
from tests.sweeps.test_stages import Logging, staged_study
from tests.tracking.helpers import fresh_store
from tvrl_bench.cli.main import main
from tvrl_bench.sweeps.driver import run_sweep

pytestmark = pytest.mark.integration


def test_a_saved_record_loaded_into_a_new_store_resumes_the_study_with_nothing_rerun(tmp_path_factory, tmp_path,
                                                                                    monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    uri_a, uri_b = fresh_store(tmp_path_factory, first), fresh_store(tmp_path_factory, second)
    study = staged_study(tmp_path)
    done = run_sweep(study, Logging, options(uri_a, tmp_path))
    record = tmp_path / "staged.jsonl"
    assert main(["record", "save", "staged", "--out", str(record), "--tracking-uri", uri_a]) == 0
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[0]["study"] == "staged" and "tvrl.decide" in lines[0]["parent_tags"] and len(lines) == 26
    assert all("wide_eval/overall" in line["metrics"] for line in lines[1:])

    assert main(["record", "load", str(record), "--tracking-uri", uri_b]) == 0
    assert main(["record", "load", str(record), "--tracking-uri", uri_b]) == 0  # a second load adds nothing
    out = capsys.readouterr().out
    assert "study staged: 25 trials logged" in out and "study staged: 0 trials logged" in out and "25 already there" in out
    executor = Logging()
    resumed = run_sweep(study, lambda: executor, options(uri_b, tmp_path / "elsewhere"))
    assert executor.commands == []
    assert resumed.decision_lines() == done.decision_lines()


@pytest.mark.parametrize("content, needle", [
    ("not json\n", ":1: not a JSON line"),
    ('{"key": "x"}\n', ":1: no record header"),
])
def test_a_file_that_is_not_a_record_is_one_line(tmp_path, capsys, content, needle):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    assert main(["record", "load", str(bad), "--tracking-uri", f"sqlite:///{tmp_path / 'm.db'}"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert needle in line and str(bad) in line


def write_record(path, study="rec", profile="components/profiles/toy.gin", trials=None, tables="power"):
    """A record of two trials (uniform and window3, seed 0) as `record save` writes one."""
    header = {"format": 1, "study": study, "parent_tags": {"tvrl.profile": profile, "tvrl.tables": tables}}
    name = Path(profile).stem
    trials = trials or [
        {"key": f"k{credit}", "run_name": f"{credit}-s0", "tags": {"tvrl.attempt": "1"},
         "params": {"credit": credit, "seed": "0", "method": "GRPO", "profile": name, "training.trial.steps": "2"},
         "metrics": {"wide_eval/overall": [0.5 + 0.1 * i, 2]}}
        for i, credit in enumerate(("uniform", "window3"))]
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *trials]))
    return path


def store_runs(uri):
    """{run name: status} of every active run in the store."""
    client = MlflowClient(uri)
    return {r.info.run_name: r.info.status for e in client.search_experiments()
            for r in client.search_runs([e.experiment_id])}


def load(path, uri, capsys) -> tuple[int, str]:
    code = main(["record", "load", str(path), "--tracking-uri", uri])
    return code, capsys.readouterr().err.strip()


@pytest.mark.parametrize("edit, needle", [
    (lambda t: t[1]["metrics"].update({"wide_eval/overall": ["0.6", 2]}), ":3: metrics['wide_eval/overall'] = ['0.6', 2]"),
    (lambda t: t[1]["metrics"].update({"wide_eval/overall": [0.6]}), ":3: metrics['wide_eval/overall'] = [0.6] must be"),
    (lambda t: t[1]["params"].update({"seed": [0]}), ":3: params['seed'] = [0] must be one of strings or numbers"),
    (lambda t: t[1]["tags"].update({"tvrl.attempt": 1}), ":3: tags['tvrl.attempt'] = 1 must be one of strings"),
    (lambda t: t[1].update({"params": "credit=window3"}), ":3: params must map names to strings or numbers, not str"),
    (lambda t: t[1].update({"key": t[0]["key"]}), ":3: trial key kuniform is recorded twice (line 2 too)"),
    (lambda t: t[1]["params"].update({"x": "y" * 6001}), ":3: params['x'...] is longer than a run holds"),
])
def test_a_record_with_a_wrongly_typed_value_writes_nothing(tmp_path_factory, tmp_path, capsys, edit, needle):
    uri = fresh_store(tmp_path_factory, tmp_path)
    good = write_record(tmp_path / "good.jsonl")
    assert load(good, uri, capsys)[0] == 0
    trials = [json.loads(line) for line in good.read_text().splitlines()[1:]]
    edit(trials)
    bad = write_record(tmp_path / "bad.jsonl", study="other", trials=trials)
    before = store_runs(uri)
    code, err = load(bad, uri, capsys)
    assert code == 2 and len(err.splitlines()) == 1 and f"{bad}{needle}" in err, err
    assert store_runs(uri) == before  # no study 'other', no run


def test_a_load_that_fails_while_logging_leaves_no_run_running_and_a_rerun_completes_it(tmp_path_factory, tmp_path,
                                                                                      monkeypatch):
    from mlflow.tracking import MlflowClient as Client

    from tvrl_bench.sweeps.records import load_record

    uri = fresh_store(tmp_path_factory, tmp_path)
    record = write_record(tmp_path / "r.jsonl")
    real = Client.log_batch
    calls = []

    def failing(self, run_id, *args, **kwargs):
        calls.append(run_id)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(self, run_id, *args, **kwargs)

    monkeypatch.setattr(Client, "log_batch", failing)
    with pytest.raises(OSError):
        load_record(uri, record)
    assert store_runs(uri) == {"rec": "FINISHED", "uniform-s0": "FINISHED"}  # the half-logged run is gone
    monkeypatch.setattr(Client, "log_batch", real)
    assert load_record(uri, record) == ("rec", 1, 1)
    assert store_runs(uri) == {"rec": "FINISHED", "uniform-s0": "FINISHED", "window3-s0": "FINISHED"}


def test_an_older_load_s_unfinished_import_is_cleared_by_the_next_good_load(tmp_path_factory, tmp_path, capsys):
    """What an older version left after a bad record: a trial run and the parent RUNNING."""
    from tvrl_bench.sweeps.state import StudyTracker

    uri = fresh_store(tmp_path_factory, tmp_path)
    tracker = StudyTracker.open(uri, "rec", [], [], "")
    tracker.client.set_tag(tracker.parent_run_id, "tvrl.sweep_owner", "elsewhere:1:1")
    tracker.client.create_run(tracker.experiment_id, run_name="window3-s0", tags={
        "tvrl.trial_key": "kwindow3", "mlflow.parentRunId": tracker.parent_run_id, "tvrl.imported_from": "bad.jsonl"})
    assert set(store_runs(uri).values()) == {"RUNNING"}
    assert load(write_record(tmp_path / "r.jsonl"), uri, capsys)[0] == 0
    assert store_runs(uri) == {"rec": "FINISHED", "uniform-s0": "FINISHED", "window3-s0": "FINISHED"}


def test_a_record_of_another_profile_is_refused_by_the_store_s_study(tmp_path_factory, tmp_path, capsys):
    uri = fresh_store(tmp_path_factory, tmp_path)
    assert load(write_record(tmp_path / "toy.jsonl"), uri, capsys)[0] == 0
    before = store_runs(uri)
    other = write_record(tmp_path / "v3.jsonl", profile="components/profiles/toy_v3.gin")
    code, err = load(other, uri, capsys)
    assert code == 2 and err == (f"tvrl-bench record: error: {other}: the record's runs ran the profile toy_v3, and "
                                 "study rec in the store holds runs of toy: a table would average them as one seed; "
                                 "load it into another store (--tracking-uri)")
    assert store_runs(uri) == before


def test_a_record_of_another_step_count_is_refused_by_the_store_s_study(tmp_path_factory, tmp_path, capsys):
    uri = fresh_store(tmp_path_factory, tmp_path)
    assert load(write_record(tmp_path / "a.jsonl"), uri, capsys)[0] == 0
    trials = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()[1:]]
    for trial in trials:
        trial["key"] += "-75"
        trial["params"]["training.trial.steps"] = "75"
    code, err = load(write_record(tmp_path / "b.jsonl", trials=trials), uri, capsys)
    assert code == 2 and f"{tmp_path / 'b.jsonl'}:2: study rec in the store holds this trial's arm and seed under " \
        "another trial key (training.trial.steps = 2 (now 75))" in err


def test_a_record_holding_two_profiles_is_refused(tmp_path_factory, tmp_path, capsys):
    uri = fresh_store(tmp_path_factory, tmp_path)
    path = write_record(tmp_path / "r.jsonl")
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1], lines[2].replace('"profile": "toy"', '"profile": "toy_v3"')]) + "\n")
    code, err = load(path, uri, capsys)
    assert code == 2 and "the record holds runs of 2 profiles: toy (line 2), toy_v3 (line 3)" in err


def test_a_shipped_record_restores_the_study_s_tables_on_a_fresh_store(tmp_path_factory, tmp_path, monkeypatch):
    """The documented resume: `record load reports/records/rewards.jsonl`, then `tvrl-report --study rewards`
    renders the study's two tables, not every table definition."""
    from tvrl_bench.config import PROJECT_ROOT
    from tvrl_bench.report import regenerate

    uri = fresh_store(tmp_path_factory, tmp_path)
    assert main(["record", "load", str(PROJECT_ROOT / "reports/records/rewards.jsonl"), "--tracking-uri", uri]) == 0
    monkeypatch.chdir(tmp_path)
    summary = regenerate("rewards", uri, tmp_path / "reports", formats="md", plots=False, page=False)
    assert sorted(summary["tables"]) == ["rewards", "rewards_combined"] and not summary["skipped"]


@pytest.mark.parametrize("study", ["credit", "samplers", "rewards"])
def test_a_shipped_record_names_the_tables_and_profile_of_its_study_file(study):
    from tvrl_bench.config import PROJECT_ROOT
    from tvrl_bench.sweeps.plan import load_study
    from tvrl_bench.sweeps.record_check import read_record

    header, trials = read_record(PROJECT_ROOT / f"reports/records/{study}.jsonl")
    planned, _ = load_study(str(PROJECT_ROOT / f"sweeps/{study}.gin"))
    assert header["parent_tags"]["tvrl.tables"] == ",".join(planned.tables)
    assert header["parent_tags"]["tvrl.profile"] == planned.profile and trials
