"""What a final evaluation shows under --no-progress (tvrl_bench/training/eval_progress.py): what it does when it
starts, a line at each quarter with the time so far, one when it is done."""

from __future__ import annotations

import logging

from tvrl_bench.training.eval_progress import EvalProgress


def test_without_a_bar_an_evaluation_logs_its_start_its_quarters_and_its_end(caplog):
    with caplog.at_level(logging.INFO, logger="tvrl_bench.trial"):
        progress = EvalProgress("wide evaluation of 100 held-out prompts", 100, bar=False)
        for done in (8, 16, 24, 32, 60, 64, 96, 100):  # batches of the trial's micro-batch
            progress(done)
        progress.close()
    lines = [r.getMessage().removeprefix("wide evaluation of 100 held-out prompts: ") for r in caplog.records]
    assert [line.split(" (")[0] for line in lines] == [
        "generating and scoring them", "32 of 100 prompts done", "60 of 100 prompts done", "96 of 100 prompts done",
        "done in 0 s"]


def test_with_a_bar_it_logs_nothing(caplog):
    with caplog.at_level(logging.INFO, logger="tvrl_bench.trial"):
        progress = EvalProgress("final evaluation of 4 eval prompts", 4, bar=True)
        progress(4)
        assert progress.bar.n == 4
        progress.close()
    assert not caplog.records
