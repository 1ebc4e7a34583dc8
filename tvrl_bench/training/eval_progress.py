"""What a trial's final evaluations show while they run: a progress bar, or under `--no-progress` log lines.

A default toy trial ends with a wide evaluation of 626 held-out prompts, a minute or more on a CPU, longer
than a short trial's training: without a bar (`--no-progress`, a sweep's trials) it logs what it is doing when it
starts, a line at each quarter with the time so far, and one when it is done, so a silent minute never looks like
a hung process.
"""

from __future__ import annotations

import logging
import time

from tqdm import tqdm

log = logging.getLogger("tvrl_bench.trial")


class EvalProgress:
    """Called with the prompts done so far (`progress(done)`); `close()` at the end. `what` names the
    evaluation ("wide evaluation of 626 held-out prompts"), `total` is its prompt count."""

    def __init__(self, what: str, total: int, bar: bool):
        self.what, self.total = what, total
        self.started = time.perf_counter()
        self.bar = tqdm(total=total, desc=what.split(" of ")[0], unit="prompt") if bar else None
        self.next_quarter = 1  # the next quarter of the prompts to log
        if self.bar is None:
            log.info("%s: generating and scoring them", what)

    def __call__(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
            return
        if done >= self.total or done < self.total * self.next_quarter / 4:
            return  # the last line is close()'s
        log.info("%s: %d of %d prompts done (%.0f s)", self.what, done, self.total, time.perf_counter() - self.started)
        while done >= self.total * self.next_quarter / 4:
            self.next_quarter += 1

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        else:
            log.info("%s: done in %.0f s", self.what, time.perf_counter() - self.started)
