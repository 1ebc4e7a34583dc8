"""Pairwise judgments: the Judgment record, its CSV import and export, and the SQLite file that stores them.

A judgment compares method A with method B on one prompt and seed: `verdict` is from A's point of view
(win = A's video is better), `left` names the method whose video was shown on the left. Judgments come from a
judge component run over a study's final samples (`pairs.judge_study`) or from people: imported from CSV
(`JudgmentStore.import_csv`; columns in CSV_COLUMNS) or voted on the blind study page (`tvrl-bench annotate`).
The win-rate table that summarises them is `table.py`.
"""

from __future__ import annotations

import csv
import datetime as dt
import sqlite3
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from tvrl_bench.report.errors import ReportError

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

    def add(self, judgments: Iterable[Judgment], replacing: tuple[str, str, str, str] | None = None) -> int:
        """Store judgments (replacing a judge's earlier verdict on the same pair); returns how many. replacing =
        (study, method_a, method_b, judge): first delete, in the same transaction, all that judge's judgments
        between the two methods (either one as A) in that study, so a rerun that swaps A and B or pairs other
        prompts leaves nothing of the earlier run to count twice."""
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        rows = [
            (j.study, j.prompt, str(j.seed), int(j.sample), j.method_a, j.method_b, j.left, j.judge, j.verdict,
             j.run_a, j.run_b, j.created_at or now)
            for j in judgments
        ]
        with self._lock, self._conn:
            if replacing is not None:
                study, a, b, judge = replacing
                self._conn.execute("DELETE FROM judgments WHERE study = ? AND judge = ? AND method_a IN (?, ?) AND "
                                   "method_b IN (?, ?)", (study, judge, a, b, a, b))
            self._conn.executemany(
                "INSERT OR REPLACE INTO judgments (study, prompt, seed, sample, method_a, method_b, left_method, "
                "judge, verdict, run_a, run_b, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        return len(rows)

    def judgments(self, study: str | None = None) -> list[Judgment]:
        """The stored judgments (of one study) as records, in the order of `frame`."""
        frame = self.frame(study)
        return [Judgment(**rec) for rec in frame.to_dict("records")]

    def frame(self, study: str | None = None) -> pd.DataFrame:
        """The stored judgments (of one study), one row each in the order stored (a replaced verdict moves to the
        end); columns: the fields of Judgment (study, prompt, seed, sample, method_a, method_b, left, judge,
        verdict, run_a, run_b, created_at)."""
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
        """The studies that have judgments, sorted."""
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
        """Write the stored judgments (of one study) to a CSV file with the columns CSV_COLUMNS; returns its path."""
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
                f"have {', '.join(needed)} (optional: sample, created_at)"
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

