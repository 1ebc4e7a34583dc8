"""A study in MLflow's own UI, as a person opens it: the link `tvrl-sweep` printed, in headless Chromium.

The study is the shared two-trial sweep (`pausable_sweep`: uniform and window3 credit, 5 steps, a real
`tvrl-sweep`); the server is the `mlflow ui` command the sweep printed, on a free loopback port. The runs link must
list every trial by name (not folded under the study's parent run) with its `eval/overall`, and the chart view,
one click away, must draw a `train/reward_mean` curve in each trial's colour. Screenshots go to
$TVRL_TEST_ARTIFACTS (else the test's tmp folder) as mlflow_runs.png and mlflow_charts.png.
"""

from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from tests.annotate.test_browser import artifacts_dir
from tests.tracking.mlflow_ui import CARD, MlflowUi, StudyPage, launch, on_port, printed_links

pytestmark = pytest.mark.integration

def _trials(uri: str, study: str) -> dict[str, object]:
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(study)
    runs = client.search_runs([experiment.experiment_id], filter_string="tags.`tvrl.role` = 'trial'")
    return {run.info.run_id: run for run in runs}


@pytest.mark.timeout(2400)  # a fresh machine installs Chromium first
def test_printed_link_shows_trials_and_curves(pausable_sweep, tmp_path):
    from playwright.sync_api import sync_playwright

    _, uri, _, result = pausable_sweep
    assert result.returncode == 0, result.stderr[-3000:]
    links = printed_links(result.stdout)
    assert result.stdout.rstrip().endswith(links.charts), "the links are not the sweep's last lines"
    assert links.serve == f"mlflow ui --backend-store-uri {uri}", links.serve
    trials = _trials(uri, "tiny")
    assert len(trials) == 2 and all("eval/overall" in r.data.metrics for r in trials.values())

    out = artifacts_dir(tmp_path)
    ui = MlflowUi(links.serve, tmp_path, tmp_path / "mlflow_ui.log")
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = StudyPage(browser)
            page.open(on_port(links.runs, ui.origin))

            columns = page.header_columns()
            for column in ("params.`method`", "params.`seed`", "metrics.`eval/overall`", "metrics.`eval/critic_reward`"):
                assert column in columns, f"no column {column} in {columns}"
            rows = page.rows()
            for run_id, run in trials.items():
                assert run_id in rows, f"trial {run.info.run_name} is not listed: {rows}"
                row = rows[run_id]
                assert row["attributes.`Run Name`"].endswith(run.info.run_name), row
                assert row["metrics.`eval/overall`"] == page.js_number(run.data.metrics["eval/overall"]), row
                assert row["params.`method`"] == run.data.params["method"], row
                assert page.page.locator(f".ag-row[row-id='{run_id}']").first.is_visible()
            page.screenshot(out / "mlflow_runs.png")

            page.click_chart_view()  # one click from the runs table
            assert "compareRunsMode=CHART" in page.page.url
            colors = {rows[run_id]["color"] for run_id in trials}
            assert page.curve_colors("train/reward_mean") == colors

            page.open(on_port(links.charts, ui.origin), wait_for=f"{CARD} g.trace")  # the printed chart link
            page.screenshot(out / "mlflow_charts.png")
            assert page.curve_colors("train/reward_mean") == colors
            assert not page.errors, page.errors
            browser.close()
    finally:
        ui.stop()
