"""Reading an experiment's runs into one frame: the SQL fast path gives exactly what search_runs gives."""

from __future__ import annotations

import pandas as pd


def test_sql_path_reads_exactly_what_search_runs_returns(new_study, mlflow_store):
    from types import SimpleNamespace

    from tvrl_bench.report.runs.frames import runs_frame, search_all_runs, sql_runs_frame

    _, client, _ = mlflow_store
    study = new_study("sql")
    study.trial({"method": "GRPO", "seed": "0"}, {"eval/overall": 0.5, "eval/odd": float("nan")},
                history={"train/loss": [3.0, 2.0, 1.0]})
    study.trial({"method": "TVRL", "seed": "1", "lr": "1e-4"}, {"eval/overall": 0.25}, status="FAILED")
    deleted = study.trial({"method": "TVRL", "seed": "2"}, {"eval/overall": 0.75})
    client.delete_run(deleted)
    study.finish()
    fast = sql_runs_frame(client, study.experiment_id)
    slow = runs_frame(search_all_runs(client, study.experiment_id))
    assert fast is not None and deleted not in set(fast["run_id"])
    fast = fast.sort_values("run_id").reset_index(drop=True)
    slow = slow.sort_values("run_id").reset_index(drop=True)
    assert sorted(fast.columns) == sorted(slow.columns)
    pd.testing.assert_frame_equal(fast, slow[fast.columns], check_dtype=False)
    assert fast["metrics.train/loss"].dropna().tolist() == [1.0]  # the latest value, as search_runs gives
    assert sorted(fast["nan_metrics"].tolist()) == [(), (), ("eval/odd",)]  # a logged NaN, told from one never logged
    assert sql_runs_frame(SimpleNamespace(_tracking_client=SimpleNamespace(store=object())), "1") is None
