"""One arm of the noise screen (diagnostics/screen_noise.py) in a process of its own: train a configuration (or,
with 0 steps, only evaluate it) and write the wide evaluation's scores.

    python -m tvrl_bench.diagnostics.noise_arm SPEC.json

SPEC.json holds {"files": [...], "bindings": [...], "folder": the checkpoint folder, "result": where to write}; the
result is {prompt index: evaluator score, ..., "overall": wide_eval/overall}. The screen starts each arm in its
own process group and stops the group when it is stopped, so an arm needs no signal handling of its own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from tvrl_bench.training.trial.built import build_trainer


def run_arm(files: list[str], bindings: list[str], folder: str | Path) -> dict[str, float]:
    """{prompt index: evaluator score} of the trained configuration's wide evaluation, plus 'overall'."""
    torch.set_num_threads(1)
    result = build_trainer(files, bindings, folder).run()
    scores = {str(r["index"]): float(r["score"]) for r in result.wide.records}
    return {**scores, "overall": float(result.wide.metrics["overall"])}


def main(argv: list[str] | None = None) -> int:
    spec = json.loads(Path((argv if argv is not None else sys.argv[1:])[0]).read_text())
    scores = run_arm(spec["files"], spec["bindings"], spec["folder"])
    Path(spec["result"]).write_text(json.dumps(scores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
