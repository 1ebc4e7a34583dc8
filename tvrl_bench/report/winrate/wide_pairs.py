"""`tvrl-bench judge --wide`: judgments from the wide evaluation's per-video records instead of sample videos.

A trial with a wide evaluation logs the exact evaluator's per-video records as `wide_eval/results.json` (a list,
one record per held-out prompt: index, prompt, score, fraction, checks). The two runs of a trial pair (same seed and
`match` params: `pairs.paired_runs`) generated the same prompts with the same noise (generation seed = trial seed),
so their records pair by prompt, the k-th record of a prompt with the k-th. The recorded scores decide: A wins when
its score is higher, loses when it is lower, ties when they are equal. The judgments are stored under the judge
name WIDE_JUDGE, in place of all that judge's earlier judgments of the two methods in the study (a rerun counts
nothing twice); the `winrate` table reads them like any other judge's. No video is shown, so `left` is A.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from tvrl_bench.report.errors import ReportError
from tvrl_bench.report.runs.artifacts import ArtifactReader
from tvrl_bench.report.runs.study import make_client
from tvrl_bench.report.winrate.judgments import Judgment, JudgmentStore
from tvrl_bench.report.winrate.pairs import method_labels, paired_runs, store_judgments

log = logging.getLogger(__name__)

WIDE_JUDGE = "evaluator:wide"
WIDE_PREFIX = "wide_eval"  # the records artifact: wide_eval/results.json (training/evaluation.py: WIDE_RECORDS)
RERUN = ("rerun the study's trials with training.trial.wide_eval_prompts > 0 (the toy profiles bind 1000); "
         "`tvrl-bench wide-eval` logs only the wide_eval/* metrics, not these records")


def verdict(score_a: float, score_b: float) -> str:
    """A's verdict from the two recorded scores: "win" when A's is higher, "loss" when lower, "tie" when equal."""
    return "win" if score_a > score_b else "loss" if score_a < score_b else "tie"


def wide_judgments(
    study: str,
    a: str | Mapping[str, str] = "TVRL",
    b: str | Mapping[str, str] = "GRPO",
    *,
    tracking_uri: str | None = None,
    labels: tuple[str, str] | None = None,
    match: tuple[str, ...] = ("policy", "sampler", "reward"),
    client: Any = None,
) -> list[Judgment]:
    """One judgment per paired wide-evaluation record of A and B in `study` (see the module), in run-pair order,
    then in A's record order; `sample` is k, the prompt's k-th record. ReportError (one line naming the run and
    the fix) for a run without the records, a record without a numeric score, two runs whose records hold other
    prompts, or two trial pairs of one seed (a judgment records only study, prompt, seed and methods)."""
    client = client or make_client(tracking_uri)
    label_a, label_b = method_labels(a, b, labels)
    trials, run_pairs = paired_runs(study, a, b, client=client, tracking_uri=tracking_uri, match=match)
    seen: dict[str, tuple[str, str]] = {}
    for run_a, run_b, seed in run_pairs:
        if seed in seen:
            raise ReportError(
                f"study '{study}': two trial pairs ({' / '.join(seen[seed])} and {run_a} / {run_b}) both have seed "
                f"{seed}, and a judgment records only study, prompt, seed and methods: narrow --a / --b to one trial "
                "of each method per seed (e.g. --a method=TVRL,sampler=sage --b method=GRPO,sampler=sage)"
            )
        seen[seed] = (run_a, run_b)
    reader = ArtifactReader(client)
    judgments: list[Judgment] = []
    try:
        for run_a, run_b, seed in run_pairs:
            scores_a, scores_b = _scores(reader, trials, run_a), _scores(reader, trials, run_b)
            _check_same_prompts(study, seed, trials, (run_a, scores_a), (run_b, scores_b))
            judgments += [
                Judgment(study, prompt, seed, label_a, label_b, label_a, WIDE_JUDGE,
                         verdict(score, scores_b[(prompt, k)]), k, run_a, run_b)
                for (prompt, k), score in scores_a.items()
            ]
    finally:
        reader.close()
    return judgments


def judge_wide(study: str, a: str | Mapping[str, str] = "TVRL", b: str | Mapping[str, str] = "GRPO", *,
               store: JudgmentStore | str | Path, **options: Any) -> list[Judgment]:
    """`wide_judgments(study, a, b, **options)` (options: tracking_uri, labels, match, client), stored in `store` in
    place of WIDE_JUDGE's earlier judgments of A and B (either side as A) in `study`; returns them. Nothing is
    stored when any run pair is refused."""
    judgments = wide_judgments(study, a, b, **options)
    label_a, label_b = method_labels(a, b, options.get("labels"))
    store_judgments(store, judgments, replacing=(study, label_a, label_b, WIDE_JUDGE))
    log.info("stored %d wide-evaluation judgments of %s vs %s in study %s", len(judgments), label_a, label_b, study)
    return judgments


def describe(trials: pd.DataFrame, run_id: str) -> str:
    """"run 'NAME' (RUN_ID, method M)" for a run of the trials frame (columns run_id, run_name, params.method)."""
    row = trials[trials["run_id"] == run_id].iloc[0]
    return f"run '{row.get('run_name')}' ({run_id}, method {row.get('params.method')})"


def _scores(reader: ArtifactReader, trials: pd.DataFrame, run_id: str) -> dict[tuple[str, int], float]:
    """{(prompt, k): score} of a run's wide_eval/results.json records, k counting a prompt's records in order."""
    records = reader.records(run_id, WIDE_PREFIX)
    if not records:
        row = trials[trials["run_id"] == run_id].iloc[0]
        imported = row.get("tags.tvrl.imported_from")
        why = f" (it was loaded from the record {imported}, which holds no artifacts)" if isinstance(imported, str) else ""
        raise ReportError(f"{describe(trials, run_id)} has no {WIDE_PREFIX}/results.json{why}: {RERUN}")
    out: dict[tuple[str, int], float] = {}
    counts: dict[str, int] = {}
    for i, record in enumerate(records):
        prompt, score = str(record.get("prompt", "")), record.get("score")
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            raise ReportError(
                f"{describe(trials, run_id)}: {WIDE_PREFIX}/results.json record {i} (prompt {prompt!r}) has score "
                f"{score!r}, not a number; --wide needs an evaluator that scores every video (the toy evaluator)"
            )
        k = counts.get(prompt, 0)
        counts[prompt] = k + 1
        out[(prompt, k)] = float(score)
    return out


def _check_same_prompts(study: str, seed: str, trials: pd.DataFrame, *sides: tuple[str, dict]) -> None:
    """ReportError unless the two runs' records (run id, {(prompt, k): score}) hold the same prompts as often."""
    (run_a, a), (run_b, b) = sides
    fix = ("the two runs' wide evaluations drew different held-out prompts: pair runs of one dataset and "
           "training.trial.wide_eval_prompts, or rerun them with the same")
    if len(a) != len(b):
        raise ReportError(f"study '{study}', seed {seed}: {describe(trials, run_a)} has {len(a)} {WIDE_PREFIX} "
                          f"records and {describe(trials, run_b)} has {len(b)}; {fix}")
    only = next((key for key in a if key not in b), None)
    if only is not None:
        raise ReportError(f"study '{study}', seed {seed}: prompt {only[0]!r} (record {only[1] + 1} of it) is in the "
                          f"{WIDE_PREFIX} records of {describe(trials, run_a)} but not of {describe(trials, run_b)}; "
                          f"{fix}")
