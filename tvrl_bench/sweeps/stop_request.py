"""The sweep driver's signal handling while trials run: SIGTERM, SIGINT or SIGHUP is forwarded to the running
trials (they checkpoint at their next step boundary), and the first signal is remembered."""

from __future__ import annotations

import logging
import signal
import threading

from tvrl_bench.executors.base import Executor

log = logging.getLogger("tvrl_bench.sweeps")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class StopRequest:
    """Signal handlers of the driver while trials run: remember the first signal and forward each one."""

    def __init__(self, executor: Executor):
        self.executor = executor
        self.signum: int | None = None
        self.previous: dict[int, object] = {}

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self.previous = {sig: signal.signal(sig, self._handle) for sig in STOP_SIGNALS}

    def restore(self) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous = {}

    def _handle(self, signum: int, frame) -> None:
        first = self.signum is None
        self.signum = self.signum or signum
        log.warning("%s: %s", signal.Signals(signum).name,
                    "stopping the running trials at their next step boundary (send it again to stop them at once)"
                    if first else "stopping the running trials now")
        self.executor.interrupt()
