"""`tvrl-report` through the installed console script, on runs logged with the MLflow client."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest
from mlflow import MlflowClient
from mlflow.entities import Metric, Param

from tests.support import console_script
from tvrl_bench.cli.report import main

pytestmark = pytest.mark.integration


def run(*args, cwd):
    return subprocess.run([console_script("tvrl-report"), *args], capture_output=True, text=True, check=False,
                          cwd=cwd)


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A `samplers` study (parent run tagged with its tables) in a fresh SQLite store."""
    root = tmp_path_factory.mktemp("cli")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    client = MlflowClient(uri)
    experiment = client.create_experiment("samplers", artifact_location=str(root / "artifacts"))
    parent = client.create_run(experiment, run_name="samplers",
                               tags={"tvrl.role": "study", "tvrl.study": "samplers", "tvrl.tables": "samplers,winrate"})
    values = {("sage", "GRPO"): [0.50, 0.52], ("sage", "TVRL"): [0.56, 0.59]}
    for (sampler, method), vs in values.items():
        for seed, v in enumerate(vs):
            r = client.create_run(experiment, tags={"mlflow.parentRunId": parent.info.run_id, "tvrl.role": "trial"})
            client.log_batch(r.info.run_id, metrics=[Metric("eval/overall", v, 0, 10)],
                             params=[Param("sampler", sampler), Param("method", method), Param("seed", str(seed))])
            client.set_terminated(r.info.run_id)
    failed = client.create_run(experiment, tags={"mlflow.parentRunId": parent.info.run_id})
    client.set_terminated(failed.info.run_id, "FAILED")
    client.set_terminated(parent.info.run_id)
    return root, uri


def test_report_command_writes_the_tagged_tables(logged):
    root, uri = logged
    judgments = root / "judgments.csv"
    judgments.write_text("prompt,seed,method_a,method_b,left,judge,verdict\n"
                         "a red circle,0,TVRL,GRPO,GRPO,human:alice,win\n"
                         "a red circle,1,GRPO,TVRL,GRPO,human:bob,loss\n"
                         "a blue square,0,TVRL,GRPO,TVRL,human:alice,tie\n")
    result = run("--study", "samplers", "--tracking-uri", uri, "--out", "out", "--format", "md,csv", "--no-plots",
                 "--import-judgments", str(judgments), cwd=root)
    assert result.returncode == 0, result.stderr
    assert "imported 3 judgments" in result.stdout
    assert "excluded (not FINISHED): FAILED 1" in result.stdout
    assert sorted(p.name for p in (root / "out" / "samplers").iterdir()) == [
        "index.html", "page_hacking.csv", "page_improvement.csv", "page_iqm.csv", "samplers.csv", "samplers.md",
        "winrate.csv", "winrate.md"]
    assert f"study page: {Path('out') / 'samplers' / 'index.html'} (final scores from eval/*)" in result.stdout
    frame = pd.read_csv(root / "out" / "samplers" / "samplers.csv").set_index("Sampler")
    assert frame.loc["SAGE", "GRPO"] == pytest.approx(51.0) and frame.loc["SAGE", "TVRL"] == pytest.approx(57.5)
    win = pd.read_csv(root / "out" / "samplers" / "winrate.csv")
    assert win["n"].iloc[0] == 3 and win["Win"].iloc[0] == pytest.approx(200 / 3)
    assert (root / "out" / "judgments.sqlite").is_file()


def test_report_command_errors_are_clear(logged, capsys):
    root, uri = logged
    assert main(["--study", "sampler", "--tracking-uri", uri, "--out", str(root / "out")]) == 2
    err = capsys.readouterr().err
    assert "no MLflow experiment named 'sampler' at" in err and "did you mean 'samplers'?" in err
    assert main(["--study", "samplers", "--tracking-uri", f"sqlite:///{root / 'nope.db'}"]) == 2
    assert "no MLflow database at" in capsys.readouterr().err
    assert not (root / "nope.db").exists()
    assert main(["--study", "samplers", "--tracking-uri", uri, "--format", "md,pdf", "--out", str(root / "o")]) == 2
    assert "unknown report format 'pdf'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([])
    assert "--study" in capsys.readouterr().err


def test_report_refuses_an_empty_file_and_writes_nothing_into_it(tmp_path, capsys):
    empty = tmp_path / "mlflow.db"
    empty.write_bytes(b"")
    assert main(["--study", "samplers", "--tracking-uri", f"sqlite:///{empty}",
                 "--out", str(tmp_path / "reports")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("tvrl-report: error: ") and "is an empty file, not an MLflow store" in line
    assert empty.stat().st_size == 0


def test_a_page_that_cannot_be_written_is_one_line_with_the_command_that_writes_it_and_exit_2(logged, tmp_path,
                                                                                              capsys):
    _, uri = logged
    (tmp_path / "samplers" / "index.html").mkdir(parents=True)
    assert main(["--study", "samplers", "--tracking-uri", uri, "--out", str(tmp_path), "--format", "md",
                 "--no-plots", "--no-log"]) == 2
    out, err = capsys.readouterr()
    (line,) = err.strip().splitlines()
    assert line == (f"tvrl-report: error: study page not written: {tmp_path / 'samplers' / 'index.html'}: a folder "
                    "stands where this file goes; move it away; the tables are written; once that is fixed, write it "
                    f"with: tvrl-report --study samplers --tracking-uri {uri} --out {tmp_path}")
    assert "samplers.md" in out and sorted(p.name for p in (tmp_path / "samplers").iterdir()) == [
        "index.html", "samplers.md"]
    assert main(["--study", "samplers", "--tracking-uri", uri, "--out", str(tmp_path / "samplers" / "samplers.md"),
                 "--no-log"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("samplers.md/samplers: cannot make this folder (Not a directory); pass an --out you can "
                         "write in")
