"""A study whose trials logged wide-evaluation records (`wide_eval/results.json`) with known scores, and the verdicts
counted by hand from them (tests of `tvrl-bench judge --wide`)."""

from __future__ import annotations

import json

from tests.report.helpers import StudyLog

# One prompt twice: its k-th record pairs with the other run's k-th record of it.
PROMPTS = ["a red ball rolls left", "a blue cube falls", "a red ball rolls left", "a green cone spins"]
# {seed: {method: the score of each prompt above, in that order}}
SCORES = {
    0: {"TVRL": [0.9, 0.5, 0.25, 0.75], "GRPO": [0.5, 0.5, 0.75, 0.25]},
    1: {"TVRL": [1.0, 0.0, 0.5, 0.5], "GRPO": [0.75, 0.25, 0.25, 0.5]},
}
# Counted by hand from SCORES, A = TVRL: {(seed, prompt, k): verdict}
VERDICTS = {
    ("0", PROMPTS[0], 0): "win", ("0", PROMPTS[1], 0): "tie", ("0", PROMPTS[2], 1): "loss", ("0", PROMPTS[3], 0): "win",
    ("1", PROMPTS[0], 0): "win", ("1", PROMPTS[1], 0): "loss", ("1", PROMPTS[2], 1): "win", ("1", PROMPTS[3], 0): "tie",
}
WINS, LOSSES, TIES = 4, 2, 2
# GRPO logs its records in another order: pairing goes by prompt (and k), not by position.
GRPO_ORDER = [1, 0, 3, 2]


def records(scores: list[float], order: list[int] | None = None) -> list[dict]:
    """wide_eval/results.json records of PROMPTS with `scores`, listed in `order` (default: index order)."""
    return [{"index": i, "prompt": PROMPTS[i], "score": scores[i], "fraction": scores[i], "checks": ["moves"]}
            for i in (order or range(len(PROMPTS)))]


def log_wide_study(log: StudyLog, without: tuple[str, int] | None = None,
                   records_of: dict[tuple[str, int], list[dict]] | None = None) -> dict[tuple[str, int], str]:
    """Log a TVRL and a GRPO trial per seed of SCORES, each with wide_eval/results.json (GRPO's in GRPO_ORDER),
    except the (method, seed) `without`; `records_of` replaces a run's records. Returns {(method, seed): run id}."""
    runs = {}
    for seed, by_method in SCORES.items():
        for method, scores in by_method.items():
            params = {"policy": "toy", "sampler": "sage", "reward": "toy_oracle", "method": method, "seed": str(seed),
                      "credit": "window3" if method == "TVRL" else "uniform"}
            run_id = log.trial(params, {"eval/overall": 0.5})
            if (method, seed) != without:
                logged = (records_of or {}).get((method, seed), records(scores, GRPO_ORDER if method == "GRPO" else None))
                log.client.log_text(run_id, json.dumps(logged), "wide_eval/results.json")
            runs[(method, seed)] = run_id
    log.finish()
    return runs
