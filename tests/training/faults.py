"""A reward that injects faults, for tests that kill or break a real trial mid-way.

Imported by a test's gin file (`import tests.training.faults`); it wraps the toy oracle and, on its N-th
call in this process (N from an environment variable, so the trial's config and key stay the same across a
rerun), sends the process a signal, returns NaN scores or pauses (so a test can kill it at a known point).
"""

from __future__ import annotations

import os
import signal
import time

from tvrl_bench.registry import register
from tvrl_bench.rewards.toy_oracle import ToyOracle


@register("rewards", "faulty_oracle")
class FaultyOracle(ToyOracle):
    """The toy oracle, with faults on call $TVRL_FAULT_AT: $TVRL_FAULT = sigkill | sigterm | nan | pause
    (pause: sleep $TVRL_FAULT_PAUSE_S seconds, default 600, then go on)."""

    calls = 0

    def score_pairs(self, videos, prompts, questions):
        FaultyOracle.calls += 1
        scores = super().score_pairs(videos, prompts, questions)
        if FaultyOracle.calls == int(os.environ.get("TVRL_FAULT_AT", "0")):
            fault = os.environ["TVRL_FAULT"]
            if fault == "nan":
                return scores * float("nan")  # still a function of the video, as a real NaN would be
            if fault == "pause":
                time.sleep(float(os.environ.get("TVRL_FAULT_PAUSE_S", "600")))
                return scores
            os.kill(os.getpid(), {"sigkill": signal.SIGKILL, "sigterm": signal.SIGTERM}[fault])
        return scores
