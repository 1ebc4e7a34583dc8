"""Judging a study: pairing the final samples of two methods from their MLflow runs and running a judge on them.

Trials of A and B are paired when they share the seed and the `match` params; their samples (the
`samples/<stage>/index.json` artifacts) are paired by prompt. `judge_study` shows each pair to a judge component
in a seeded random left/right order and stores the judgments; `tvrl-bench annotate` shows the same pairs
(`sample_pairs`) to people; `wide_pairs.judge_wide` pairs the same trials' wide-evaluation records instead.
"""

from __future__ import annotations

import json
import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from tvrl_bench.report.errors import ReportError
from tvrl_bench.report.runs.study import load_study_runs, make_client
from tvrl_bench.report.tables.filters import match as match_filter
from tvrl_bench.report.winrate.judgments import Judgment, JudgmentStore, verdict_from_choice

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SamplePair:
    """One final sample of method A and the matching one of method B: same trial seed, prompt and k.

    entry_a / entry_b are the `samples/<stage>/index.json` entries of the two runs, each with a local "path" to
    the downloaded video file.
    """

    run_a: str
    run_b: str
    seed: str
    prompt: str
    sample: int
    entry_a: Mapping[str, Any]
    entry_b: Mapping[str, Any]

    @property
    def checks(self) -> tuple[str, ...]:
        return tuple(self.entry_a.get("checks", ()))


def method_labels(a: str | Mapping[str, str], b: str | Mapping[str, str],
                  labels: tuple[str, str] | None = None) -> tuple[str, str]:
    """The names A and B get in judgments: `labels`, else a method name itself, else "/".join(filter values)."""
    if labels is not None:
        return labels
    return tuple(x if isinstance(x, str) else "/".join(dict(x).values()) for x in (a, b))  # type: ignore[return-value]


def sample_pairs(
    study: str,
    a: str | Mapping[str, str],
    b: str | Mapping[str, str],
    folder: str | Path,
    *,
    tracking_uri: str | None = None,
    match: tuple[str, ...] = ("policy", "sampler", "reward"),
    stage: str = "final",
    seeds: Iterable[str] | None = None,
    client: Any = None,
) -> list[SamplePair]:
    """Every pair of samples of methods A and B in `study`, their videos downloaded under `folder`.

    a, b: a `method` param value ("TVRL") or a param filter ({"method": "TVRL", "credit": "window3"}). Trials of
    A and B are paired when they share `seed` and the `match` params they both have (only trial seeds in `seeds`,
    when given); their samples (from the `samples/<stage>/index.json` artifacts) are paired by prompt (the k-th
    sample of a prompt with the k-th). Pairs come in run-pair order, then in A's index order.
    """
    client = client or make_client(tracking_uri)
    run_pairs = paired_runs(study, a, b, client=client, tracking_uri=tracking_uri, match=match, seeds=seeds)[1]
    folder = Path(folder)
    pairs: list[SamplePair] = []
    for run_a, run_b, trial_seed in run_pairs:
        samples_a = _samples(client, run_a, stage, folder / run_a)
        samples_b = _samples(client, run_b, stage, folder / run_b)
        for (prompt, k), entry_a in samples_a.items():
            entry_b = samples_b.get((prompt, k))
            if entry_b is not None:
                pairs.append(SamplePair(run_a, run_b, trial_seed, prompt, k, entry_a, entry_b))
    return pairs


def paired_runs(
    study: str,
    a: str | Mapping[str, str],
    b: str | Mapping[str, str],
    *,
    client: Any,
    tracking_uri: str | None = None,
    match: tuple[str, ...] = ("policy", "sampler", "reward"),
    seeds: Iterable[str] | None = None,
) -> tuple[pd.DataFrame, list[tuple[str, str, str]]]:
    """(the study's finished trials: the frame of `load_study_runs`, [(run of A, run of B, trial seed)]): the trials
    of A and B (a `method` value or a param filter, as in `sample_pairs`) that share `seed` and the `match` params
    they both have (only trial seeds in `seeds`, when given), in A's order. ReportError when a side has no trial or
    no trials pair."""
    runs = load_study_runs(study, tracking_uri, client=client)
    filters = [{"method": x} if isinstance(x, str) else dict(x) for x in (a, b)]
    trials = runs.trials
    sides = [trials[match_filter(trials, {k: (str(v),) for k, v in f.items()})] for f in filters]
    for side, f in zip(sides, filters):
        if side.empty:
            raise ReportError(f"study '{study}' has no finished trial with {f}")
    keys = [p for p in match if f"params.{p}" in trials.columns]
    run_pairs = _pair_runs(sides[0], sides[1], keys)
    if not run_pairs:
        raise ReportError(
            f"no trial of {filters[0]} shares seed and {', '.join(keys) or 'params'} with a trial of {filters[1]} in "
            f"study '{study}'; pass match=(...) with the params that must agree"
        )
    if seeds is not None:
        wanted = {str(s) for s in seeds}
        run_pairs = [p for p in run_pairs if p[2] in wanted]
        if not run_pairs:
            raise ReportError(f"study '{study}': no paired trials with seed {', '.join(sorted(wanted))}")
    return trials, run_pairs


def judge_study(
    study: str,
    judge: Any,
    a: str | Mapping[str, str] = "TVRL",
    b: str | Mapping[str, str] = "GRPO",
    *,
    store: JudgmentStore | str | Path,
    tracking_uri: str | None = None,
    labels: tuple[str, str] | None = None,
    match: tuple[str, ...] = ("policy", "sampler", "reward"),
    judge_name: str | None = None,
    stage: str = "final",
    seed: int = 0,
    client: Any = None,
) -> list[Judgment]:
    """Judge every pair of final samples of methods A and B in `study` and store the judgments.

    a, b: a `method` param value ("TVRL") or a param filter ({"method": "TVRL", "credit": "window3"}). Trials of
    A and B are paired when they share `seed` and the `match` params they both have; their samples (from the
    `samples/<stage>/index.json` artifacts) are paired by prompt (the k-th sample of a prompt with the k-th);
    see `sample_pairs`. Which side is shown on the left is drawn from a generator seeded with `seed`; the judge's
    `judge(prompt, checks, left, right)` gets the two videos[F, 3, H, W] in [0, 1] and answers "left", "right" or
    "tie". Returns the stored judgments.
    """
    from tvrl_bench.judges import judge_label
    from tvrl_bench.videoio import read_video

    label_a, label_b = method_labels(a, b, labels)
    name = judge_name or judge_label(judge)
    rng = np.random.default_rng(seed)
    judgments: list[Judgment] = []
    with tempfile.TemporaryDirectory(prefix="tvrl-judge-") as tmp:
        pairs = sample_pairs(study, a, b, tmp, tracking_uri=tracking_uri, match=match, stage=stage, client=client)
        for pair in pairs:
            video_a, video_b = read_video(pair.entry_a["path"]), read_video(pair.entry_b["path"])
            a_left = bool(rng.integers(0, 2))
            left, right = (video_a, video_b) if a_left else (video_b, video_a)
            choice = judge.judge(pair.prompt, pair.checks, left, right)
            left_label = label_a if a_left else label_b
            judgments.append(
                Judgment(study, pair.prompt, pair.seed, label_a, label_b, left_label, name,
                         verdict_from_choice(choice, left_label, label_a), pair.sample, pair.run_a, pair.run_b)
            )
    store_judgments(store, judgments)
    log.info("judged %d sample pairs of %s vs %s in study %s with %s", len(judgments), label_a, label_b, study, name)
    return judgments


def store_judgments(store: JudgmentStore | str | Path, judgments: list[Judgment],
                    replacing: tuple[str, str, str, str] | None = None) -> None:
    """Add `judgments` to `store` (a JudgmentStore, or the path of one, opened and closed here); `replacing` as in
    `JudgmentStore.add`."""
    owned = not isinstance(store, JudgmentStore)
    target = JudgmentStore(store) if owned else store
    try:
        target.add(judgments, replacing)
    finally:
        if owned:
            target.close()


def _pair_runs(side_a: pd.DataFrame, side_b: pd.DataFrame, keys: list[str]) -> list[tuple[str, str, str]]:
    """[(run of A, run of B, trial seed)] for the runs of two runs frames (columns run_id, params.<name>) whose
    `keys` params and seed agree, in A's order."""
    def key_of(row: pd.Series) -> tuple:
        return tuple(row.get(f"params.{k}") for k in keys) + (row.get("params.seed"),)

    by_key: dict[tuple, list[str]] = {}
    for _, row in side_b.iterrows():
        by_key.setdefault(key_of(row), []).append(row["run_id"])
    pairs = []
    for _, row in side_a.iterrows():
        for run_b in by_key.get(key_of(row), []):
            pairs.append((row["run_id"], run_b, str(row.get("params.seed"))))
    return pairs


def _samples(client: Any, run_id: str, stage: str, folder: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """{(prompt, k): entry with a local "path"} from a run's samples/<stage>/ artifacts."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        local = Path(client.download_artifacts(run_id, f"samples/{stage}", str(folder)))
    except Exception as exc:  # MLflow raises several types for a missing artifact
        raise ReportError(f"run {run_id} has no samples/{stage}/ artifacts to judge ({exc})") from None
    index_path = local / "index.json"
    if not index_path.is_file():
        raise ReportError(f"run {run_id}: samples/{stage}/index.json is missing")
    entries = json.loads(index_path.read_text())
    out: dict[tuple[str, int], dict[str, Any]] = {}
    counts: dict[str, int] = {}
    for entry in entries:
        prompt = entry["prompt"]
        k = counts.get(prompt, 0)
        counts[prompt] = k + 1
        out[(prompt, k)] = {**entry, "path": local / entry["file"]}
    return out
