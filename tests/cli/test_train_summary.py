"""tvrl-train's last line names each final metric by what logged it (eval/*, wide_eval/*), so a NaN is named by
the metric that was NaN."""

from __future__ import annotations

import math
from pathlib import Path

from tvrl_bench.cli import train as train_cli
from tvrl_bench.training.trial import run as trial_run
from tvrl_bench.training.trial.options import TrialResult


def test_a_nan_final_metric_is_named_by_the_metric_that_was_nan(tmp_path, monkeypatch, capsys):
    result = TrialResult("abc", "FINISHED", {"overall": math.nan, "slot": 0.5}, "k", tmp_path,
                         {"overall": 0.75, "slot": 0.75})
    monkeypatch.setattr(trial_run, "run_trial", lambda *args, **kwargs: result)
    monkeypatch.setattr("tvrl_bench.tracking.store.check_store", lambda uri: None)
    code = train_cli.main(["components/profiles/toy.gin", "--tracking-uri", f"sqlite:///{tmp_path / 'm.db'}",
                           "--out", str(tmp_path / "runs")])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.strip() == ("run abc FINISHED: eval/overall=nan eval/slot=0.5000 wide_eval/overall=0.7500 "
                           "wide_eval/slot=0.7500")
    assert err.strip().splitlines()[-1] == ("tvrl-train: warning: eval/overall is NaN: the final policy diverged, and "
                                            "the tables leave this run out of those cells")
    assert not Path(tmp_path / "m.db").exists()
