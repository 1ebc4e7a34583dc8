"""Training curves (mean and band over seeds) and the latest credit heatmaps, beside the tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread, imsave

from tvrl_bench.report import regenerate
from tvrl_bench.report.render.plots import cell_curves, curve_stats, latest_heatmap
from tvrl_bench.report.runs.histories import HistoryCache
from tvrl_bench.report.tables.table_result import CellRuns


def test_curve_stats_per_step_over_runs():
    a = pd.Series([1.0, 2.0, 3.0], index=[0, 1, 2])
    b = pd.Series([3.0, 4.0], index=[0, 1])
    stats = curve_stats([a, b])
    assert stats["mean"].tolist() == [2.0, 3.0, 3.0]
    assert stats["std"].iloc[:2].tolist() == pytest.approx([np.std([1, 3], ddof=1), np.std([2, 4], ddof=1)])
    assert np.isnan(stats["std"].iloc[2]) and stats["n"].tolist() == [2, 2, 1]


@pytest.fixture(scope="module")
def plotted(new_study, mlflow_store, tmp_path_factory):
    uri, client, _ = mlflow_store
    images = tmp_path_factory.mktemp("images")
    study = new_study("plots")
    run_ids = {}
    for credit, offset in (("uniform", 0.0), ("window3", 0.2)):
        for seed in range(3):
            history = {"train/reward_mean": [offset + 0.01 * step + 0.05 * seed for step in range(20)],
                       "train/credit_entropy": [1.0 - 0.01 * step for step in range(20)]}
            run_id = study.trial({"credit": credit, "method": "GRPO" if credit == "uniform" else "TVRL",
                                  "seed": seed}, {"eval/overall": 0.5 + offset}, history=history)
            run_ids[(credit, seed)] = run_id
            if seed == 0:
                for step, value in ((10, 0.2), (20, 0.9)):  # the step-20 map is the latest
                    path = images / f"step_{step:06d}.png"
                    imsave(path, np.full((8, 8), value), cmap="gray", vmin=0, vmax=1)
                    client.log_artifact(run_id, str(path), "credit")
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=uri, out_dir=out, tables="credit")
    return summary, out / study.study, run_ids, client


def test_plots_are_written_beside_the_tables_and_logged(plotted):
    summary, folder, _, client = plotted
    files = summary["tables"]["credit"]["files"]
    assert str(folder / "credit.curves.png") in files and str(folder / "credit.heatmaps.png") in files
    for name in ("credit.curves.png", "credit.heatmaps.png"):
        image = imread(folder / name)
        assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    html = (folder / "credit.html").read_text()
    assert 'src="credit.curves.png"' in html and 'src="credit.heatmaps.png"' in html
    logged = {f.path for f in client.list_artifacts(summary["parent_run_id"], "reports")}
    assert {"reports/credit.curves.png", "reports/credit.heatmaps.png", "reports/credit.md"} <= logged


def test_latest_heatmap_and_curve_data(plotted):
    _, _, run_ids, client = plotted
    assert latest_heatmap(client, run_ids[("uniform", 0)]) == ("credit/step_000020.png", 20)
    assert latest_heatmap(client, run_ids[("uniform", 1)]) is None
    cache = HistoryCache(client)
    cell = CellRuns("Uniform", [run_ids[("uniform", s)] for s in range(3)], ["0", "1", "2"])
    ((_, stats, used),) = cell_curves([cell], "train/reward_mean", cache)
    assert used == 3 and stats.index.tolist() == list(range(20))
    expected = np.array([[0.01 * step + 0.05 * seed for seed in range(3)] for step in range(20)])
    assert stats["mean"].to_numpy() == pytest.approx(expected.mean(axis=1))
    assert stats["std"].to_numpy() == pytest.approx(expected.std(axis=1, ddof=1))
    ((_, _, capped),) = cell_curves([cell], "train/reward_mean", cache, max_runs_per_cell=2)
    assert capped == 2
    assert cell_curves([cell], "train/not_logged", cache) == []


def test_bulk_history_read_matches_the_per_run_api(plotted):
    _, _, run_ids, client = plotted
    ids = list(run_ids.values())
    bulk = HistoryCache(client)
    bulk.prefetch(ids, "train/reward_mean")
    per_run = HistoryCache(client)
    for run_id in ids:
        expected = pd.Series({m.step: m.value for m in client.get_metric_history(run_id, "train/reward_mean")})
        pd.testing.assert_series_equal(bulk.get(run_id, "train/reward_mean"), expected.sort_index(), check_names=False)
        pd.testing.assert_series_equal(per_run.get(run_id, "train/reward_mean"), expected.sort_index(),
                                       check_names=False)
