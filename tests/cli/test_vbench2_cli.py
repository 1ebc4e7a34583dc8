"""`tvrl-bench vbench2 score|setup`: `score` through the installed console script, the rest in-process."""

from __future__ import annotations

import subprocess

import pytest

from tests.evaluators.vbench2.test_results import SCORES, cal_final_score, write_results
from tests.support import console_script
from tvrl_bench.cli import vbench2 as vbench2_cli
from tvrl_bench.cli.main import main
from tvrl_bench.evaluators.vbench2.spec import MISSING_POLICIES

pytestmark = pytest.mark.integration


def test_score_prints_categories_then_overall(tmp_path):
    dims = list(SCORES.items())
    first = write_results(tmp_path / "a" / "results_1_eval_results.json", dict(dims[:10]))
    write_results(tmp_path / "b" / "deeper" / "results_2_eval_results.json", dict(dims[10:]))
    result = subprocess.run(
        [console_script("tvrl-bench"), "vbench2", "score", str(first), str(tmp_path / "b")],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    values = dict(line.split("=") for line in lines)
    expected = cal_final_score(SCORES)
    assert list(values) == ["creativity", "commonsense", "controllability", "human_fidelity", "physics", "overall"]
    for name, value in values.items():
        assert float(value) == pytest.approx(expected[name], abs=1e-12)
    assert lines[-1].startswith("overall=") and 0 < float(lines[-1].split("=")[1]) < 1


def test_score_options_and_incomplete_results(tmp_path, capsys):
    path = write_results(tmp_path / "results_eval_results.json", dict(list(SCORES.items())[:17]))
    assert main(["vbench2", "score", str(path)]) == 1
    assert "lack 1 of 18 dimensions: Multi-View_Consistency" in capsys.readouterr().err
    assert main(["vbench2", "score", str(path), "--missing", "zero", "--dimensions"]) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = cal_final_score(dict(list(SCORES.items())[:17]))
    assert len(lines) == 17 + 6 and lines[0] == f"dim/human_anatomy={SCORES['Human_Anatomy']!r}"
    assert float(lines[-1].split("=")[1]) == pytest.approx(expected["overall"], abs=1e-12)
    assert vbench2_cli.MISSING_POLICIES == MISSING_POLICIES


def test_setup_help_and_dry_run(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["vbench2", "setup", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "NEEDS NETWORK ACCESS" in help_text and "--repo PATH_OR_URL" in help_text and "--dry-run" in help_text
    assert main(["vbench2", "setup", "--env", str(tmp_path / "env"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"python3.10 -m venv {tmp_path / 'env'}" in out
    assert "git clone --depth 1 https://github.com/Vchitect/VBench.git" in out
    assert not (tmp_path / "env").exists()
