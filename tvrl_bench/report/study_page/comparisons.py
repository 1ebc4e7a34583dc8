"""The probability of improvement between every pair of methods and each method's IQM (report/stats/improvement.py),
beside the paired deltas of the tables.

Scores are x 100. Where every run logged per-video scores of the evaluation the page reads (`eval/results.json`
for `eval/*`, `wide_eval/results.json` for `wide_eval/*`: records with a `score`), a task is a prompt of it and a
run is a seed (the runs of one seed averaged): P(A > B) is the probability that A beats B on a random prompt for a
random seed of each. Otherwise (runs that logged no records, or an evaluator without per-video scores) there is
one task, the final overall score, and the runs are the seeds. The IQM needs at least MIN_IQM_SEEDS seeds. A study of more than
MAX_ALL_PAIRS methods compares each with the first one (the base model where there is one), not every pair.

The intervals use improvement.py's `runs_and_tasks` bootstrap (whole seeds and the prompts redrawn), not rliable's
stratified one: a seed is one trained policy scored on every prompt, so its scores across the prompts move together.
On the default power study (5 seeds x 594 prompts) the stratified interval of P(window3 > uniform) is [0.470, 0.497],
separated from 1/2, while the paired delta of the same runs is -0.86 [-2.97, +1.26]; over seeds and prompts it is
[0.454, 0.512].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tvrl_bench.report.stats.improvement import Estimate, iqm, probability_of_improvement
from tvrl_bench.report.stats.intervals import DeltaStat, paired_delta
from tvrl_bench.report.study_page.methods import Method, Source, seed_key

SCALE = 100.0
BOOTSTRAP = "runs_and_tasks"
MIN_IQM_SEEDS = 3
MAX_ALL_PAIRS = 10  # with more methods, each is compared with the first (the base model) only

# (run id, "eval" or "wide_eval") -> {(index, prompt): score}
PromptScores = Callable[[str, str], "dict[tuple[int, str], float] | None"]


@dataclass
class Scores:
    """A method's scores[seeds, tasks] (x 100) with the seeds' and tasks' names."""

    seeds: list[str]
    tasks: list
    matrix: np.ndarray


@dataclass
class Pair:
    a: str
    b: str
    improvement: Estimate | None
    delta: DeltaStat | None  # paired by seed: A - B of the final overall score
    missing: str | None = None


@dataclass
class MethodIqm:
    method: str
    estimate: Estimate | None
    missing: str | None = None


@dataclass
class Comparisons:
    unit: str  # what a task is, for the page
    pairs: list[Pair]
    iqms: list[MethodIqm]


def method_scores(methods: list[Method], source: Source, prompt_scores: PromptScores | None) -> tuple[dict[str, Scores], str]:
    """{method label: Scores} and the sentence saying what a task is."""
    per_prompt = None
    if prompt_scores is not None:
        per_prompt = {}
        for m in methods:
            for run_id in m.runs["run_id"]:
                scores = prompt_scores(str(run_id), source.prefix)
                if scores is None:
                    per_prompt = None
                    break
                per_prompt[str(run_id)] = scores
            if per_prompt is None:
                break
    if per_prompt is not None:
        tasks = None
        for scores in per_prompt.values():
            tasks = set(scores) if tasks is None else tasks & set(scores)
        if tasks:
            ordered = sorted(tasks)
            out = {m.label: _prompt_matrix(m, per_prompt, ordered) for m in methods}
            return out, (f"per seed and prompt: a task is one of the {len(ordered)} prompts every run scored "
                         f"({source.prefix}/results.json), a run is a seed")
    out = {}
    for m in methods:
        values = m.per_seed(source.overall)
        seeds = sorted(values, key=seed_key)
        out[m.label] = Scores(seeds, ["overall"], np.array([[SCALE * values[s]] for s in seeds]).reshape(len(seeds), 1))
    why = f"not every run logged per-video scores ({source.prefix}/results.json)"
    return out, f"per seed: one task, the final {source.overall} ({why}), a run is a seed"


def _prompt_matrix(method: Method, per_prompt: dict[str, dict], tasks: list) -> Scores:
    by_seed: dict[str, list[np.ndarray]] = {}
    for run_id, seed in zip(method.runs["run_id"], method.runs["_seed"]):
        scores = per_prompt[str(run_id)]
        by_seed.setdefault(str(seed), []).append(np.array([scores[t] for t in tasks], dtype=float))
    seeds = sorted(by_seed, key=seed_key)
    matrix = np.array([np.mean(by_seed[s], axis=0) for s in seeds]) * SCALE
    return Scores(seeds, tasks, matrix.reshape(len(seeds), len(tasks)))


def compare(methods: list[Method], source: Source, prompt_scores: PromptScores | None = None,
            resamples: int = 2_000) -> Comparisons:
    """Every pair (a later method against an earlier one, so the base model is always the second) and every IQM."""
    scores, unit = method_scores(methods, source, prompt_scores)
    pairs = []
    for i, a in enumerate(methods):
        for b in methods[:i] if len(methods) <= MAX_ALL_PAIRS else methods[:min(i, 1)]:
            sa, sb = scores[a.label], scores[b.label]
            delta = paired_delta({s: SCALE * v for s, v in a.per_seed(source.overall).items()},
                                 {s: SCALE * v for s, v in b.per_seed(source.overall).items()})
            delta = None if np.isnan(delta.delta) else delta
            if not len(sa.seeds) or not len(sb.seeds):
                lacking = a if not len(sa.seeds) else b
                pairs.append(Pair(a.label, b.label, None, delta, f"{lacking.label}: {lacking.why_absent(source.overall)}"))
                continue
            estimate = probability_of_improvement(sa.matrix, sb.matrix, resamples=resamples, seed=len(pairs),
                                                  bootstrap=BOOTSTRAP)
            pairs.append(Pair(a.label, b.label, estimate, delta))
    iqms = []
    for m in methods:
        s = scores[m.label]
        if len(s.seeds) < MIN_IQM_SEEDS:
            diverged = len(m.diverged(source.overall))
            more = f" ({diverged} diverged: {source.overall} is NaN)" if diverged else ""
            iqms.append(MethodIqm(m.label, None, f"{len(s.seeds)} seed{'s' if len(s.seeds) != 1 else ''}{more}: the "
                                                 f"IQM needs {MIN_IQM_SEEDS} or more"))
        else:
            iqms.append(MethodIqm(m.label, iqm(s.matrix, resamples=resamples, seed=1000 + len(iqms),
                                               bootstrap=BOOTSTRAP)))
    return Comparisons(unit, pairs, iqms)
