"""A reward that injects faults, for tests that kill or break a real trial mid-way.

Imported by a test's gin file (`import tests.training.faults`); it wraps the toy oracle and, on its N-th
call in this process (N from an environment variable, so the trial's config and key stay the same across a
rerun), sends the process a signal, returns NaN scores or pauses (so a test can kill or stop it at a known
point; a pause ends early when SIGTERM or SIGINT arrives, so a stopped trial does not sit out the pause).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.training.pauses import PAUSED_DIR_ENV
from tvrl_bench.registry import register
from tvrl_bench.rewards.toy_oracle import ToyOracle


@register("rewards", "faulty_oracle")
class FaultyOracle(ToyOracle):
    """The toy oracle, with faults on call $TVRL_FAULT_AT: $TVRL_FAULT = sigkill | sigterm | nan | pause
    (pause: wait $TVRL_FAULT_PAUSE_S seconds, default 600, or until SIGTERM / SIGINT, then go on; with
    $TVRL_FAULT_PAUSED_DIR set, the pause announces itself there, see `pause_until_signalled`)."""

    calls = 0

    def score_pairs(self, videos, prompts, questions):
        FaultyOracle.calls += 1
        scores = super().score_pairs(videos, prompts, questions)
        if FaultyOracle.calls == int(os.environ.get("TVRL_FAULT_AT", "0")):
            fault = os.environ["TVRL_FAULT"]
            if fault == "nan":
                return scores * float("nan")  # still a function of the video, as a real NaN would be
            if fault == "pause":
                pause_until_signalled(float(os.environ.get("TVRL_FAULT_PAUSE_S", "600")))
                return scores
            os.kill(os.getpid(), {"sigkill": signal.SIGKILL, "sigterm": signal.SIGTERM}[fault])
        return scores


def pause_until_signalled(seconds: float, until=None) -> None:
    """Wait `seconds`, or until SIGTERM or SIGINT arrives (or `until()` is true); the handler installed before (the
    trial's) still runs.

    A plain time.sleep would resume after the trial's handler returns (PEP 475) and hold the stop for the rest of
    the pause. Once this pause's handlers are installed it writes an empty file named by the process id into
    $TVRL_FAULT_PAUSED_DIR (when set): a test that signals only after seeing it cannot hit the window before the
    pause, where the trial would note the stop and then sit out the whole pause.
    """
    arrived: list[int] = []
    stops = (signal.SIGTERM, signal.SIGINT)
    previous = {sig: signal.getsignal(sig) for sig in stops}

    def note(sig, frame):
        arrived.append(sig)
        if callable(previous[sig]):
            previous[sig](sig, frame)

    for sig in stops:
        signal.signal(sig, note)
    if os.environ.get(PAUSED_DIR_ENV):
        folder = Path(os.environ[PAUSED_DIR_ENV])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / str(os.getpid())).touch()
    try:
        deadline = time.monotonic() + seconds
        while not arrived and time.monotonic() < deadline and not (until and until()):
            time.sleep(0.05)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if arrived and previous[arrived[0]] == signal.SIG_DFL:
        os.kill(os.getpid(), arrived[0])  # nobody handles it: die of it as the process would have
