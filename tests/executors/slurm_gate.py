"""A reward that holds a trial inside a Slurm job until the test opens a gate, so the test can requeue, cancel or
outlive it at a known point.

Imported by the study's gin file (`import tests.executors.slurm_gate`). It scores as the toy oracle; on its
$TVRL_GATE_AT-th call in a Slurm job's first start ($SLURM_JOB_ID set, $SLURM_RESTART_COUNT 0) it announces
itself in $TVRL_FAULT_PAUSED_DIR and waits until the file $TVRL_GATE_DIR/open exists or SIGTERM arrives (the
trial then stops at its step boundary and checkpoints). Outside Slurm it never waits, so the local executor's
run of the same trials is the uninterrupted reference.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.training.faults import pause_until_signalled
from tvrl_bench.registry import register
from tvrl_bench.rewards.toy_oracle import ToyOracle


@register("rewards", "slurm_gate")
class SlurmGate(ToyOracle):
    """The toy oracle, held at call $TVRL_GATE_AT of a Slurm job's first start until $TVRL_GATE_DIR/open exists."""

    calls = 0

    def score_pairs(self, videos, prompts, questions):
        SlurmGate.calls += 1
        scores = super().score_pairs(videos, prompts, questions)
        first_start = "SLURM_JOB_ID" in os.environ and os.environ.get("SLURM_RESTART_COUNT", "0") == "0"
        if first_start and "TVRL_GATE_DIR" in os.environ and SlurmGate.calls == int(os.environ["TVRL_GATE_AT"]):
            gate = Path(os.environ["TVRL_GATE_DIR"]) / "open"
            pause_until_signalled(600, until=gate.exists)
        return scores
