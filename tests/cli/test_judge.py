"""`tvrl-bench judge` with the toy evaluator judge on a logged toy study, then the win-rate table."""

from __future__ import annotations

import subprocess

import pytest

from tests.annotate.helpers import log_toy_study
from tests.support import console_script

pytestmark = pytest.mark.integration


def test_the_toy_judge_prefers_ground_truth_and_feeds_the_winrate_table(tmp_path):
    study = log_toy_study(tmp_path, study="judged")
    store = tmp_path / "judgments.sqlite"
    judged = subprocess.run(
        [console_script("tvrl-bench"), "judge", "--study", "judged", "--judge", "components/judges/toy_evaluator.gin",
         "--tracking-uri", study.uri, "--store", str(store)],
        capture_output=True, text=True, timeout=600,
    )
    assert judged.returncode == 0, judged.stderr[-3000:]
    # TVRL's samples are the ground truth of their prompts, GRPO's show another prompt: the exact judge sees it.
    pairs = len(study.prompts) * len(study.seeds)
    assert f"{pairs} judgments stored" in judged.stdout and f"A wins {pairs}, B wins 0" in judged.stdout
    report = subprocess.run(
        [console_script("tvrl-report"), "--study", "judged", "--tracking-uri", study.uri, "--tables", "winrate",
         "--judgments", str(store), "--out", str(tmp_path / "reports"), "--no-plots", "--no-log", "--format", "csv"],
        capture_output=True, text=True, timeout=600,
    )
    assert report.returncode == 0, report.stderr[-3000:]
    header, row = (tmp_path / "reports" / "judged" / "winrate.csv").read_text().splitlines()[:2]
    values = dict(zip(header.split(","), row.split(",")))
    assert values["Comparison"] == "TVRL vs GRPO" and float(values["Win"]) == 100.0 and values["n"] == str(pairs)
