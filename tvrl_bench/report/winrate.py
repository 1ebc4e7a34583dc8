"""Win-rate studies: blind pairwise judgments, stored in SQLite, summarised as Win / Loss / Tie and a win rate.

A judgment compares method A with method B on one prompt and seed: `verdict` is from A's point of view
(win = A's video is better), `left` names the method whose video was shown on the left. Judgments come from a
judge component run over a study's final samples (`judge_study`) or from people: imported from CSV
(`JudgmentStore.import_csv`; columns in CSV_COLUMNS) or voted on the blind study page (`tvrl-bench annotate`,
which pairs samples with `sample_pairs` as `judge_study` does). The win-rate table normalises every judgment so
that the table's method is A, then reports for each opponent: Win, Loss, Tie as percentages of all judgments,
the win rate excluding ties = Win / (Win + Loss) with the std of the per-seed win rates, its 95% interval
(stats.py: prompt-clustered bootstrap, exact when one side wins everything) and n = the number of judgments.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import logging
import sqlite3
import tempfile
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from tvrl_bench.report.definitions import WinrateTable
from tvrl_bench.report.runs import ReportError
from tvrl_bench.report.stats import ValueStat, bootstrap_win_rate, value_stat
from tvrl_bench.report.tables import Column, Count, Interval, Missing, Number, Row, TableResult

log = logging.getLogger(__name__)

VERDICTS = ("win", "loss", "tie")
CHOICES = ("left", "right", "tie")
REQUIRED_CSV_COLUMNS = ("prompt", "seed", "method_a", "method_b", "left", "judge", "verdict")
CSV_COLUMNS = ("study",) + REQUIRED_CSV_COLUMNS + ("sample", "created_at")


@dataclass(frozen=True)
class Judgment:
    """One blind pairwise judgment of method A against method B (verdict from A's point of view)."""

    study: str
    prompt: str
    seed: str
    method_a: str
    method_b: str
    left: str
    judge: str
    verdict: str
    sample: int = 0
    run_a: str = ""
    run_b: str = ""
    created_at: str = ""

    def __post_init__(self) -> None:
        problems = validate_fields(self.method_a, self.method_b, self.left, self.verdict)
        if problems:
            raise ValueError(f"invalid judgment ({self.prompt!r}, seed {self.seed}): {problems}")

    def flipped(self) -> "Judgment":
        """The same judgment seen from B's side (A and B swapped, win and loss swapped)."""
        verdict = {"win": "loss", "loss": "win", "tie": "tie"}[self.verdict]
        return replace(self, method_a=self.method_b, method_b=self.method_a, verdict=verdict,
                       run_a=self.run_b, run_b=self.run_a)


def validate_fields(method_a: str, method_b: str, left: str, verdict: str) -> str:
    """'' when the fields make a valid judgment, else what is wrong."""
    if not method_a or not method_b:
        return "method_a and method_b must be non-empty"
    if method_a == method_b:
        return f"method_a and method_b are both '{method_a}'"
    if verdict not in VERDICTS:
        return f"verdict '{verdict}' is not one of {', '.join(VERDICTS)} (from method A's point of view)"
    if left not in (method_a, method_b):
        return f"left '{left}' must name the method shown on the left: '{method_a}' or '{method_b}'"
    return ""


def verdict_from_choice(choice: str, left: str, method_a: str) -> str:
    """Turn a judge's "left" / "right" / "tie" into A's verdict, given which method was shown on the left."""
    if choice not in CHOICES:
        raise ValueError(f"a judge must answer one of {', '.join(CHOICES)}, got {choice!r}")
    if choice == "tie":
        return "tie"
    a_on_left = left == method_a
    return "win" if (choice == "left") == a_on_left else "loss"


# ---- storage -----------------------------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    study TEXT NOT NULL,
    prompt TEXT NOT NULL,
    seed TEXT NOT NULL,
    sample INTEGER NOT NULL DEFAULT 0,
    method_a TEXT NOT NULL,
    method_b TEXT NOT NULL,
    left_method TEXT NOT NULL,
    judge TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('win', 'loss', 'tie')),
    run_a TEXT NOT NULL DEFAULT '',
    run_b TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    UNIQUE (study, prompt, seed, sample, method_a, method_b, judge)
)
"""


class JudgmentStore:
    """Judgments in a SQLite file. A judge judging the same (study, prompt, seed, sample, A, B) again replaces its
    earlier verdict, so re-running a judge or re-importing a CSV does not count twice."""

    def __init__(self, path: str | Path, *, wal: bool = False) -> None:
        """wal: switch the file to write-ahead logging with full syncs (what a server taking votes wants: every
        committed vote survives a crash, and readers such as tvrl-report never block the writer). The store may
        be used from several threads; its calls are serialised."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        if wal:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute(_SCHEMA)
        self._conn.commit()

    def __enter__(self) -> "JudgmentStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    def add(self, judgments: Iterable[Judgment]) -> int:
        """Store judgments (replacing a judge's earlier verdict on the same pair); returns how many."""
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        rows = [
            (j.study, j.prompt, str(j.seed), int(j.sample), j.method_a, j.method_b, j.left, j.judge, j.verdict,
             j.run_a, j.run_b, j.created_at or now)
            for j in judgments
        ]
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO judgments (study, prompt, seed, sample, method_a, method_b, left_method, "
                "judge, verdict, run_a, run_b, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        return len(rows)

    def judgments(self, study: str | None = None) -> list[Judgment]:
        frame = self.frame(study)
        return [Judgment(**rec) for rec in frame.to_dict("records")]

    def frame(self, study: str | None = None) -> pd.DataFrame:
        """The stored judgments (of one study) with the fields of Judgment as columns."""
        query = (
            "SELECT study, prompt, seed, sample, method_a, method_b, left_method AS left, judge, verdict, run_a, "
            "run_b, created_at FROM judgments"
        )
        params: tuple[Any, ...] = ()
        if study is not None:
            query += " WHERE study = ?"
            params = (study,)
        with self._lock:
            return pd.read_sql_query(query + " ORDER BY rowid", self._conn, params=params)

    def studies(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT DISTINCT study FROM judgments ORDER BY study")]

    def verdicts(
        self, study: str, method_a: str, method_b: str, judge: str
    ) -> dict[tuple[str, str, int], tuple[str, str]]:
        """{(prompt, seed, sample): (left, verdict)} of one judge's judgments of A against B in `study`."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT prompt, seed, sample, left_method, verdict FROM judgments WHERE study = ? AND method_a = ? "
                "AND method_b = ? AND judge = ?",
                (study, method_a, method_b, judge),
            ).fetchall()
        return {(prompt, seed, int(sample)): (left, verdict) for prompt, seed, sample, left, verdict in rows}

    def import_csv(self, path: str | Path, study: str | None = None) -> int:
        """Import judgments from a CSV file (see `read_judgments_csv`); returns how many were stored."""
        return self.add(read_judgments_csv(path, study))

    def export_csv(self, path: str | Path, study: str | None = None) -> Path:
        frame = self.frame(study)
        path = Path(path)
        frame[list(CSV_COLUMNS)].to_csv(path, index=False)
        return path


def read_judgments_csv(path: str | Path, study: str | None = None) -> list[Judgment]:
    """Judgments from a CSV file with a header row.

    Columns: study (optional when `study` is given; it fills empty cells), prompt, seed, method_a, method_b,
    left (the method shown on the left), judge (who judged, e.g. "human:alice"), verdict (win / loss / tie from
    method A's point of view), optional sample (the k-th sample of that prompt and seed, default 0) and
    created_at. Other columns are ignored. Errors name the file, line and column.
    """
    path = Path(path)
    if not path.is_file():
        raise ReportError(f"judgments CSV not found: {path}")
    judgments = []
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = [h.strip() for h in reader.fieldnames or []]
        reader.fieldnames = header
        needed = list(REQUIRED_CSV_COLUMNS) + ([] if study else ["study"])
        missing = [c for c in needed if c not in header]
        if missing:
            raise ReportError(
                f"{path}:1: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; the header must "
                f"have {', '.join(needed)} (optional: sample, created_at{'' if study else ''})"
            )
        for record in reader:
            line = reader.line_num
            values = {k: (v or "").strip() for k, v in record.items() if k is not None}
            row_study = values.get("study") or study
            if not row_study:
                raise ReportError(f"{path}:{line}: empty study (fill the column or pass the study name)")
            for column in REQUIRED_CSV_COLUMNS:
                if not values.get(column):
                    raise ReportError(f"{path}:{line}: empty '{column}'")
            verdict = values["verdict"].lower()
            problem = validate_fields(values["method_a"], values["method_b"], values["left"], verdict)
            if problem:
                raise ReportError(f"{path}:{line}: {problem}")
            try:
                sample = int(values.get("sample") or 0)
            except ValueError:
                raise ReportError(f"{path}:{line}: sample '{values['sample']}' is not an integer") from None
            judgments.append(
                Judgment(row_study, values["prompt"], values["seed"], values["method_a"], values["method_b"],
                         values["left"], values["judge"], verdict, sample, created_at=values.get("created_at", ""))
            )
    return judgments


# ---- summaries ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WinrateStat:
    """Counts and rates of A against B; rates in [0, 1]."""

    method_a: str
    method_b: str
    wins: int
    losses: int
    ties: int
    win_rate: float  # wins / (wins + losses), NaN when every judgment is a tie
    ci_low: float
    ci_high: float
    ci_method: str  # "bootstrap", "exact" or "none"
    seed_rates: ValueStat  # per-seed win rates excluding ties (std over seeds)
    prompts: int
    seeds: int
    judges: int

    @property
    def n(self) -> int:
        return self.wins + self.losses + self.ties


def oriented(frame: pd.DataFrame, method: str) -> pd.DataFrame:
    """Judgments where `method` is one side, rewritten so that it is method A (verdicts flipped as needed)."""
    is_a = frame["method_a"] == method
    is_b = frame["method_b"] == method
    flip = frame[is_b].copy()
    flip["method_a"], flip["method_b"] = frame.loc[is_b, "method_b"], frame.loc[is_b, "method_a"]
    if "run_a" in flip.columns and "run_b" in flip.columns:
        flip["run_a"], flip["run_b"] = frame.loc[is_b, "run_b"], frame.loc[is_b, "run_a"]
    flip["verdict"] = flip["verdict"].map({"win": "loss", "loss": "win", "tie": "tie"})
    return pd.concat([frame[is_a], flip], ignore_index=True)


def winrate_stat(pair: pd.DataFrame, resamples: int = 10_000, seed: int = 0) -> WinrateStat:
    """Statistics of judgments all oriented the same way (one method_a, one method_b)."""
    wins = int((pair["verdict"] == "win").sum())
    losses = int((pair["verdict"] == "loss").sum())
    ties = int((pair["verdict"] == "tie").sum())
    decisive = pair.loc[pair["verdict"] != "tie", ["prompt", "seed"]].assign(won=pair["verdict"] == "win")
    by_prompt = decisive.groupby("prompt")["won"].agg(["sum", "count"])
    prompt_wins = by_prompt["sum"].to_numpy(dtype=np.int64)
    prompt_losses = by_prompt["count"].to_numpy(dtype=np.int64) - prompt_wins
    lo, hi, method = bootstrap_win_rate(prompt_wins, prompt_losses, resamples=resamples, seed=seed)
    per_seed = decisive.groupby("seed")["won"].mean()
    rate = wins / (wins + losses) if wins + losses else float("nan")
    return WinrateStat(
        method_a=str(pair["method_a"].iloc[0]),
        method_b=str(pair["method_b"].iloc[0]),
        wins=wins,
        losses=losses,
        ties=ties,
        win_rate=rate,
        ci_low=lo,
        ci_high=hi,
        ci_method=method,
        seed_rates=value_stat(per_seed.to_numpy()),
        prompts=int(pair["prompt"].nunique()),
        seeds=int(pair["seed"].nunique()),
        judges=int(pair["judge"].nunique()),
    )


def build_winrate_table(defn: WinrateTable, judgments: pd.DataFrame, study: str) -> TableResult:
    """Rows "<method> vs X" for every opponent X in the study's judgments (filtered by the table's judge glob)."""
    frame = judgments[judgments["study"] == study] if len(judgments) else judgments
    if len(frame) and defn.judge is not None:
        frame = frame[frame["judge"].map(defn.accepts_judge)]
    notes: list[str] = []
    warnings: list[str] = []
    rows: list[Row] = []
    if len(frame):
        mine = oriented(frame, defn.method)
        others = len(frame) - len(mine)
        if others:
            notes.append(f"{others} judgments not involving {defn.method} are not shown.")
        present = [str(v) for v in mine["method_b"].unique()]
    else:
        mine, present = frame, []
    for opponent in defn.opponents.arrange(present):
        label = defn.label.format(a=defn.method, b=defn.opponents.label(opponent))
        pair = mine[mine["method_b"] == opponent] if len(mine) else mine
        if pair.empty:
            reason = f"no judgments of {defn.method} against {opponent}"
            warnings.append(f"table '{defn.name}': row '{label}': {reason}")
            rows.append(Row(label, [Missing(reason)] * 5 + [Count(0)]))
            continue
        s = winrate_stat(pair)
        pct = 100.0 / s.n
        rate = (
            ValueStat(100 * s.win_rate, 100 * s.seed_rates.std, s.seed_rates.n, ())
            if s.wins + s.losses
            else Missing("every judgment is a tie")
        )
        interval = Interval(100 * s.ci_low, 100 * s.ci_high, 50.0) if s.wins + s.losses else Missing("all ties")
        if s.wins + s.losses == 0:
            warnings.append(f"table '{defn.name}': row '{label}': every judgment is a tie, no win rate")
        rows.append(
            Row(label, [Number(s.wins * pct), Number(s.losses * pct), Number(s.ties * pct), rate, interval,
                        Count(s.n)])
        )
    result = TableResult(
        name=defn.name,
        kind="winrate",
        study=study,
        title=defn.title,
        caption=defn.caption,
        row_header=defn.row_header,
        columns=[
            Column("Win", "number"),
            Column("Loss", "number"),
            Column("Tie", "number"),
            Column("Win rate (excl. ties)", "value"),
            Column("95% CI", "interval"),
            Column("n", "count"),
        ],
        rows=rows,
        decimals=defn.decimals,
        n_column=False,
        warnings=warnings,
    )
    result.notes = [
        "Win, Loss, Tie: % of the n judgments (A = "
        f"{defn.method}, verdicts from its side). Win rate (excl. ties) = Win / (Win + Loss), ± std over seeds.",
        "95% CI: percentile bootstrap over prompts (10,000 resamples); exact Clopper-Pearson interval when one side "
        "wins every decisive judgment. † the CI includes 50%.",
    ] + notes + [f"Missing: {w.split(': ', 1)[1]}" for w in warnings]
    for w in warnings:
        log.warning("%s", w)
    return result


# ---- judging a study ---------------------------------------------------------------------------------------------


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
    from tvrl_bench.report.runs import load_study_runs, make_client
    from tvrl_bench.report.tables import match as match_filter

    client = client or make_client(tracking_uri)
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
    see `sample_pairs`. Which side is shown on the left is drawn from a generator seeded with `seed`. Returns the
    stored judgments.
    """
    from tvrl_bench.report.judges import judge_label
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
    owned = not isinstance(store, JudgmentStore)
    target = JudgmentStore(store) if owned else store
    try:
        target.add(judgments)
    finally:
        if owned:
            target.close()
    log.info("judged %d sample pairs of %s vs %s in study %s with %s", len(judgments), label_a, label_b, study, name)
    return judgments


def _pair_runs(side_a: pd.DataFrame, side_b: pd.DataFrame, keys: list[str]) -> list[tuple[str, str, str]]:
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


def judgment_records(judgments: Iterable[Judgment]) -> list[dict[str, Any]]:
    return [asdict(j) for j in judgments]
